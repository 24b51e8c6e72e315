package main

import (
	"bytes"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/kvshare/kvshare/mooncakedrv/pool"
	"github.com/kvshare/kvshare/mooncakedrv/pool/pooltest"
	"github.com/kvshare/kvshare/tools/internal/realpool"
)

// The two commands a user runs against their own pool: doctor, then the
// main job over it.
func TestRealPoolCommands(t *testing.T) {
	dir := pooltest.Dir(t)
	p := pooltest.Start(t, pool.ForTests(dir))
	path := realpool.StoreConfig(t, dir, p)

	var out, errs bytes.Buffer
	code := run([]string{"doctor", "--store", path}, &out, &errs)
	t.Logf("kvshare doctor --store %s\n%s", path, out.String())
	assert.Equal(t, 0, code, "stderr: %s", errs.String())
	assert.Contains(t, out.String(), "doctor: every check passed for "+path)
	assert.NotContains(t, out.String(), "FAIL")

	out.Reset()
	errs.Reset()
	code = run([]string{"roundtrip", "--store", path, "-rows", "256", "-row-kib", "64", "-view-rows", "32"}, &out, &errs)
	t.Logf("kvshare roundtrip --store %s\n%s", path, out.String())
	assert.Equal(t, 0, code, "stderr: %s", errs.String())
	s := out.String()
	assert.Contains(t, s, "256 blocks of 64 KiB through the Mooncake pool of "+path+" at master "+p.MasterAddress()+" (8 views, 4 workers per driver)")
	assert.Contains(t, s, "keys     kvshare-test/roundtrip/")
	assert.Contains(t, s, "publish  256 ready")
	assert.Contains(t, s, "fetch    256 ready")
	assert.Contains(t, s, "check    256/256 rows byte-identical")
	assert.Contains(t, s, "lent     0 rows, 0 B left after quiescence; both regions returned to their lenders")
}
