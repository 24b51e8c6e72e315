package nodeclient_test

import (
	"testing"

	"github.com/kvshare/kvshare/contract"
	"github.com/kvshare/kvshare/patience"
)

func view(groups ...contract.Group) contract.View { return contract.View{Groups: groups} }

// group is a group of region region: one row per name, at slots (nil:
// slots 0, 1, 2, …).
func group(region int, slots []int32, names ...string) contract.Group {
	g := contract.Group{Region: region, Slots: slots}
	for i, n := range names {
		g.Names = append(g.Names, []byte(n))
		if slots == nil {
			g.Slots = append(g.Slots, int32(i))
		}
	}
	return g
}

// patienceWait waits for done within the test's patience.
func patienceWait(t *testing.T, done <-chan struct{}) bool {
	t.Helper()
	return patience.For(t).Wait(done)
}
