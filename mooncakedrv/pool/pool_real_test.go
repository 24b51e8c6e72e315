package pool_test

import (
	"bufio"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/kvshare/kvshare/mooncakedrv/pool"
	"github.com/kvshare/kvshare/mooncakedrv/pool/pooltest"
)

// The real Mooncake: start a pool, reach its sockets, freeze and resume
// the provider, restart it and the master, stop, and find no process
// left.
func TestRealPool(t *testing.T) {
	dir := pooltest.Dir(t)
	ctx := t.Context()

	version, err := pool.Version(ctx, dir)
	require.NoError(t, err)
	assert.Regexp(t, `^mooncake_master version \S+`, version)
	sum, err := pool.LibrarySHA256(dir)
	require.NoError(t, err)
	t.Logf("%s; %s sha256 %s", version, pool.Library, sum)
	if want, ok := listedSHA256(t, dir, pool.Library); ok {
		assert.Equal(t, want, sum, "SHA256SUMS of the folder")
	}

	opts := pool.ForTests(dir)
	opts.SegmentSize = 64 << 20
	p := pooltest.Start(t, opts)
	var pids []int
	collect := func() { pids = append(pids, p.PIDs()...) }
	collect()
	require.Len(t, pids, 2)

	accepts(t, p.MasterAddress())
	accepts(t, net.JoinHostPort(pool.Host, strconv.Itoa(p.ProviderPort())))
	metadataAnswers(t, p.MetadataURL())
	require.NoError(t, p.Healthy())

	provider := p.PID(pool.Provider)
	require.NoError(t, p.Freeze())
	assert.Equal(t, "T", procState(t, provider))
	require.NoError(t, p.Resume())
	assert.NotEqual(t, "T", procState(t, provider))
	require.NoError(t, p.Healthy())

	require.NoError(t, p.StopProvider())
	require.NoError(t, p.StartProvider(ctx))
	collect()
	assert.NotEqual(t, provider, p.PID(pool.Provider))
	accepts(t, net.JoinHostPort(pool.Host, strconv.Itoa(p.ProviderPort())))

	addr := p.MasterAddress()
	require.NoError(t, p.KillMaster())
	require.NoError(t, p.StartMaster(ctx))
	collect()
	assert.Equal(t, addr, p.MasterAddress())
	accepts(t, p.MasterAddress())
	metadataAnswers(t, p.MetadataURL())

	require.NoError(t, p.Freeze())
	require.NoError(t, p.Stop(), "a frozen provider stops too")
	assert.Empty(t, p.PIDs())
	for _, pid := range pids {
		assert.ErrorIs(t, syscall.Kill(pid, 0), syscall.ESRCH, "pid %d left running", pid)
	}
}

func accepts(t *testing.T, addr string) {
	t.Helper()
	conn, err := net.Dial("tcp4", addr)
	require.NoError(t, err, "dialing %s", addr)
	require.NoError(t, conn.Close())
}

// metadataAnswers asks the master's HTTP metadata server for a key no one
// wrote: it answers, with "not found".
func metadataAnswers(t *testing.T, url string) {
	t.Helper()
	req, err := http.NewRequestWithContext(t.Context(), http.MethodGet, url+"?key=kvshare-pool-probe", nil)
	require.NoError(t, err)
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	assert.Equal(t, http.StatusNotFound, resp.StatusCode, "%s", body)
}

func procState(t *testing.T, pid int) string {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "stat"))
	require.NoError(t, err)
	m := regexp.MustCompile(`\) (\S) `).FindSubmatch(data)
	require.NotNil(t, m, "%s", data)
	return string(m[1])
}

// listedSHA256 reads rel's line of the folder's SHA256SUMS, if it has one.
func listedSHA256(t *testing.T, dir, rel string) (string, bool) {
	t.Helper()
	f, err := os.Open(filepath.Join(dir, "SHA256SUMS"))
	if err != nil {
		return "", false
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if sum, name, ok := strings.Cut(sc.Text(), "  "); ok && name == rel {
			return sum, true
		}
	}
	return "", false
}
