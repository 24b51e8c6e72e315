package node

import (
	"errors"
	"fmt"
	"io/fs"
	"net"
	"os"
	"path/filepath"
	"syscall"
)

// Listen creates a Unix socket at path whose file has mode from its
// first moment: it binds in a private folder beside path (0700), sets
// the mode there, and renames the socket into place. A socket already
// at path that nobody listens on is replaced; one somebody listens on,
// or anything that is not a socket, is refused. Closing the listener
// leaves the file: the caller removes it ([Node.ListenAndServe] does).
func Listen(path string, mode os.FileMode) (*net.UnixListener, error) {
	if path == "" {
		return nil, fmt.Errorf("%w: Socket is empty", ErrConfig)
	}
	if err := clearStale(path); err != nil {
		return nil, err
	}
	dir, err := os.MkdirTemp(filepath.Dir(path), ".kvshare-node-")
	if err != nil {
		return nil, fmt.Errorf("kvshare/node: socket %s: %w", path, err)
	}
	defer os.RemoveAll(dir)
	tmp := filepath.Join(dir, "socket")
	l, err := net.ListenUnix("unix", &net.UnixAddr{Name: tmp, Net: "unix"})
	if err != nil {
		return nil, fmt.Errorf("kvshare/node: socket %s: %w", path, err)
	}
	l.SetUnlinkOnClose(false) // it moves to path, which the caller removes
	if err := os.Chmod(tmp, mode); err != nil {
		_ = l.Close()
		return nil, fmt.Errorf("kvshare/node: socket %s: %w", path, err)
	}
	if err := os.Rename(tmp, path); err != nil {
		_ = l.Close()
		return nil, fmt.Errorf("kvshare/node: socket %s: %w", path, err)
	}
	return l, nil
}

// clearStale removes a socket at path that nobody listens on.
func clearStale(path string) error {
	fi, err := os.Lstat(path)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return nil
	case err != nil:
		return fmt.Errorf("kvshare/node: socket %s: %w", path, err)
	case fi.Mode().Type() != fs.ModeSocket:
		return fmt.Errorf("kvshare/node: socket %s: a %v is there, not a socket; remove it or pick another path", path, fi.Mode().Type())
	}
	c, err := net.DialUnix("unix", nil, &net.UnixAddr{Name: path, Net: "unix"})
	if err == nil {
		_ = c.Close()
		return fmt.Errorf("kvshare/node: socket %s: another process listens on it", path)
	}
	if !errors.Is(err, syscall.ECONNREFUSED) {
		return fmt.Errorf("kvshare/node: socket %s: %w", path, err)
	}
	if err := os.Remove(path); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("kvshare/node: socket %s: removing the stale socket: %w", path, err)
	}
	return nil
}
