package metrics

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/kvshare/kvshare/contract"
	"github.com/kvshare/kvshare/diskdrv"
	"github.com/kvshare/kvshare/drivekit"
	"github.com/kvshare/kvshare/memdrv"
	"github.com/kvshare/kvshare/mooncakedrv"
	"github.com/kvshare/kvshare/redisdrv"
)

// notKit is a driver not on the kit.
type notKit struct{ contract.Driver }

// Every driver on the kit gives its kit (each kit here has its own
// name), those whose own Stats shadows the kit's too; a driver off the kit, or a nil one, none.
func TestKitOfEveryDriver(t *testing.T) {
	kit := func(name string) *drivekit.Driver { return drivekit.New(nil, drivekit.Options{Name: name}) }
	mem, disk, mc, redis := kit("memdrv"), kit("diskdrv"), kit("mooncakedrv"), kit("redisdrv")
	for _, tc := range []struct {
		driver contract.Driver
		want   *drivekit.Driver
	}{
		{&memdrv.Driver{Driver: mem}, mem},
		{&diskdrv.Driver{Driver: disk}, disk},
		{&mooncakedrv.Driver{Driver: mc}, mc},
		{&redisdrv.Driver{Driver: redis}, redis},
		{(*mooncakedrv.Driver)(nil), nil},
		{(*redisdrv.Driver)(nil), nil},
		{notKit{}, nil},
	} {
		got, ok := kitOf(tc.driver)
		assert.Equal(t, tc.want != nil, ok, "%T", tc.driver)
		if tc.want != nil {
			assert.Equal(t, tc.want.Name(), got.Name(), "%T: its own kit", tc.driver)
		}
	}
}
