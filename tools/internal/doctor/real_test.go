package doctor

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/kvshare/kvshare/mooncakedrv/pool"
	"github.com/kvshare/kvshare/mooncakedrv/pool/pooltest"
	"github.com/kvshare/kvshare/patience"
	"github.com/kvshare/kvshare/tools/internal/realpool"
)

// On a real pool every check passes, the listeners with a warning: the
// transfer engine listens on every address whatever the config says.
// With the segment provider gone, the probe's put names the missing
// segment.
func TestRealPool(t *testing.T) {
	dir := pooltest.Dir(t)
	p := pooltest.Start(t, pool.ForTests(dir))
	path := realpool.StoreConfig(t, dir, p)

	rep := Run(t.Context(), Options{ConfigPath: path, Wait: patience.Scaled(30 * time.Second)})
	for _, f := range rep.Findings {
		t.Logf("%-13s %-4s %s", f.Check, f.Verdict, f.Detail)
	}
	assert.False(t, rep.Failed())
	require.Len(t, rep.Findings, len(checks))
	for _, f := range rep.Findings {
		want := OK
		if f.Check == CheckListeners {
			want = Warn
		}
		assert.Equal(t, want, f.Verdict, "%s: %s", f.Check, f.Detail)
	}
	f, _ := rep.Find(CheckListeners)
	assert.Contains(t, f.Detail, "(every address)")
	f, _ = rep.Find(CheckMaster)
	assert.Contains(t, f.Detail, p.MasterAddress()+" answered: the client's setup asked it for its version")
	sum, err := pool.LibrarySHA256(dir)
	require.NoError(t, err)
	f, _ = rep.Find(CheckLibrary)
	assert.Contains(t, f.Detail, sum)
	assert.Contains(t, f.Detail, "pinned")

	require.NoError(t, p.StopProvider())
	rep = Run(t.Context(), Options{ConfigPath: path, Wait: patience.Scaled(30 * time.Second)})
	assert.True(t, rep.Failed())
	f, _ = rep.Find(CheckPut)
	assert.Equal(t, Fail, f.Verdict)
	assert.Contains(t, f.Detail, "NO_AVAILABLE_HANDLE(-200)")
	assert.Contains(t, f.Detail, "global_segment_size = 0")
	f, _ = rep.Find(CheckClose)
	assert.Equal(t, OK, f.Verdict, "nothing reached a transfer: the client is closed")
}
