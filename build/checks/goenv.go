package checks

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/kvshare/kvshare/patience"
)

// QuietCgo is the CGO_CFLAGS of every go invocation that builds with the
// nvml tag: go's default flags, and no warning for the deprecated NVML
// functions go-nvml's generated wrappers call (about 150 lines of gcc
// output otherwise, on every first build).
const QuietCgo = "CGO_CFLAGS=-O2 -g -Wno-deprecated-declarations"

// CgoEnv returns what a go invocation with the -tags flag tags adds to
// its environment: QuietCgo when the tags hold nvml, else nothing. The
// default build (no nvml) is left as it is.
func CgoEnv(tags string) []string {
	list := strings.Split(strings.TrimPrefix(tags, "-tags="), ",")
	if slices.Contains(list, "nvml") {
		return []string{QuietCgo}
	}
	return nil
}

// DefaultTestTimeout is go test's own default -timeout.
const DefaultTestTimeout = 10 * time.Minute

// TestTimeout returns the -timeout flag of every go test the targets
// run: DefaultTestTimeout times KVSHARE_WAIT_SCALE, so that a run made
// more patient is not killed by go test first; an error names a bad
// value of the variable.
func TestTimeout() (string, error) {
	scale, err := patience.Scale()
	if err != nil {
		return "", err
	}
	return fmt.Sprintf("-timeout=%v", patience.ScaledBy(DefaultTestTimeout, scale).Round(time.Second)), nil
}
