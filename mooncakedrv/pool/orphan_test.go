package pool

import (
	"bytes"
	"context"
	"fmt"
	"log/slog"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/kvshare/kvshare/loopback"
	"github.com/kvshare/kvshare/patience"
)

// orphanEnv, set to the fake's folder, makes this test binary the child
// of TestProcessesDieWithTheirTestBinary: it starts a pool, prints its
// PIDs and exits without stopping it, as a test binary killed by its
// timeout would.
const (
	orphanEnv     = "KVSHARE_POOL_ORPHAN_FAKE"
	orphanLogsEnv = "KVSHARE_POOL_ORPHAN_LOGS"
)

func TestProcessesDieWithTheirTestBinary(t *testing.T) {
	if os.Getenv(orphanEnv) != "" {
		p, err := Start(context.Background(), Options{Dir: fakeBuild, LogDir: os.Getenv(orphanLogsEnv), Logger: slog.New(slog.DiscardHandler)})
		if err != nil {
			fmt.Println("start:", err)
			os.Exit(1)
		}
		fmt.Println("pids", strings.Trim(fmt.Sprint(p.PIDs()), "[]"))
		os.Exit(0) // no Stop, no cleanups
	}
	cmd := exec.Command(os.Args[0], "-test.run=^TestProcessesDieWithTheirTestBinary$")
	cmd.Env = append(os.Environ(), orphanEnv+"="+fakeBuild, orphanLogsEnv+"="+t.TempDir())
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	require.NoError(t, cmd.Run(), "%s", out.String())
	_, line, ok := strings.Cut(out.String(), "pids ")
	require.True(t, ok, "%s", out.String())
	fields := strings.Fields(strings.SplitN(line, "\n", 2)[0])
	require.Len(t, fields, 2, "%s", out.String())
	for _, f := range fields {
		pid, err := strconv.Atoi(f)
		require.NoError(t, err)
		// Pdeathsig delivers SIGKILL; a zombie waiting for a reaper is dead.
		assert.Eventually(t, func() bool { return gone(pid) || loopback.ProcState(pid) == 'Z' }, patience.Wait(), 10*time.Millisecond,
			"pid %d outlived the test binary that started it", pid)
	}
}
