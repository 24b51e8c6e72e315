package doctor

import (
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
)

// storeFile writes a store config into a temporary folder and returns
// its path.
func storeFile(t *testing.T, text string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "store.toml")
	require.NoError(t, os.WriteFile(path, []byte(text), 0o644))
	return path
}

// config is a valid store config naming library, master and metadata.
func config(library, master, metadata string) string {
	return fmt.Sprintf(`[blob]
key_prefix = "kvshare"

[mooncake]
library = %q
master = %q
metadata_server = %q
protocol = "tcp"
local_hostname = "127.0.0.1"
global_segment_size = 0
local_buffer_size = 67108864
`, library, master, metadata)
}

// listening returns the address of a TCP listener that accepts until the
// test ends: a master that is up, as far as a dial can tell.
func listening(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	t.Cleanup(func() { l.Close() })
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			c.Close()
		}
	}()
	return l.Addr().String()
}

// closedPort returns a loopback address nothing listens on: a listener's
// address after it closed.
func closedPort(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	addr := l.Addr().String()
	require.NoError(t, l.Close())
	return addr
}

// metadataServer answers as the master's HTTP metadata server does:
// 404 "metadata not found" at /metadata, 404 "404 Not Found" elsewhere.
func metadataServer(t *testing.T) string {
	t.Helper()
	s := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(http.StatusNotFound)
		if r.URL.Path == "/metadata" && r.URL.Query().Get("key") != "" {
			fmt.Fprint(w, "metadata not found")
			return
		}
		fmt.Fprint(w, "404 Not Found")
	}))
	t.Cleanup(s.Close)
	return s.URL + "/metadata"
}

// noEnv is an environment with nothing set.
func noEnv(string) (string, bool) { return "", false }

// env is an environment holding vars.
func env(vars map[string]string) func(string) (string, bool) {
	return func(name string) (string, bool) {
		v, ok := vars[name]
		return v, ok
	}
}
