package pool

import (
	"errors"
	"fmt"
	"sort"
	"strings"

	"github.com/kvshare/kvshare/loopback"
)

// Sentinels: every error this package returns wraps one of them, so callers
// branch with errors.Is and show the text, which names the file, the
// process and the tail of its log.
var (
	// ErrNotAbsolute: the Mooncake folder is not an absolute path.
	ErrNotAbsolute = errors.New("pool: Mooncake folder is not an absolute path")
	// ErrLayout: the folder lacks a file the pool needs (bin/mooncake_master,
	// bin/mooncake_client, lib/libmooncake_store.so) or one is not usable.
	ErrLayout = errors.New("pool: Mooncake folder is not laid out as bin/ and lib/")
	// ErrMissingLibraries: ldd reports a runtime library "not found"; the
	// error is a *MissingLibrariesError naming them and their packages.
	ErrMissingLibraries = errors.New("pool: runtime libraries not found")
	// ErrOptions: an Options field is out of range.
	ErrOptions = errors.New("pool: bad options")
	// ErrNoPorts: no free loopback port could be found in the allowed range.
	ErrNoPorts = loopback.ErrNoPorts
	// ErrEarlyExit: a process exited before its sockets accepted, on every
	// attempt the pool made.
	ErrEarlyExit = loopback.ErrEarlyExit
	// ErrNotReady: a process is alive but its sockets did not accept within
	// Options.StartTimeout (or the context ended first).
	ErrNotReady = loopback.ErrNotReady
	// ErrExited: a process the pool should be running has exited.
	ErrExited = loopback.ErrExited
	// ErrStopped: the pool was stopped; it starts nothing any more.
	ErrStopped = errors.New("pool: stopped")
	// ErrState: the call does not fit the process's state (freezing a
	// provider that is not running, starting a master that runs). A
	// process that does not show the state SIGSTOP or SIGCONT asks for
	// within Options.StopTimeout is loopback.ErrSignalState.
	ErrState = errors.New("pool: wrong state for this call")
	// ErrStillRunning: a process survived SIGTERM and SIGKILL within the
	// bound; its PID is in the text.
	ErrStillRunning = loopback.ErrStillRunning
)

// debianPackages names the Debian 12 package that ships each runtime
// library a Mooncake build of this shape links against.
var debianPackages = map[string]string{
	"libibverbs.so.1":    "libibverbs1",
	"libglog.so.1":       "libgoogle-glog0v6",
	"libgflags.so.2.2":   "libgflags2.2",
	"libjsoncpp.so.25":   "libjsoncpp25",
	"libyaml-cpp.so.0.7": "libyaml-cpp0.7",
	"liburing.so.2":      "liburing2",
}

// MissingLibrariesError names the runtime libraries ldd could not find and,
// where known, the Debian packages that provide them.
type MissingLibrariesError struct {
	// Files are the binaries and libraries checked that lack something.
	Files []string
	// Libraries are the missing sonames, sorted, each once.
	Libraries []string
}

// Packages returns the Debian packages that provide the missing libraries,
// sorted, each once; libraries of no known package are left out.
func (e *MissingLibrariesError) Packages() []string {
	seen := map[string]bool{}
	var pkgs []string
	for _, lib := range e.Libraries {
		if p, ok := debianPackages[lib]; ok && !seen[p] {
			seen[p] = true
			pkgs = append(pkgs, p)
		}
	}
	sort.Strings(pkgs)
	return pkgs
}

func (e *MissingLibrariesError) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%v: ", ErrMissingLibraries)
	for i, lib := range e.Libraries {
		if i > 0 {
			b.WriteString(", ")
		}
		if p, ok := debianPackages[lib]; ok {
			fmt.Fprintf(&b, "%s (Debian package %s)", lib, p)
		} else {
			fmt.Fprintf(&b, "%s (no known Debian package)", lib)
		}
	}
	fmt.Fprintf(&b, " — needed by %s", strings.Join(e.Files, ", "))
	if pkgs := e.Packages(); len(pkgs) > 0 {
		fmt.Fprintf(&b, "; install with: apt-get install -y %s", strings.Join(pkgs, " "))
	}
	return b.String()
}

// Unwrap makes errors.Is(err, ErrMissingLibraries) true.
func (e *MissingLibrariesError) Unwrap() error { return ErrMissingLibraries }
