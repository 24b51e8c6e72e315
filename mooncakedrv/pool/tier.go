package pool

import (
	"context"
	"os"
)

// EnvDir is the variable that turns the real-pool tier on: the absolute
// path of a Mooncake folder (bin/, lib/).
const EnvDir = "KVSHARE_MOONCAKE_DIR"

// TierOff is the one line a real-pool test skips with when the tier is
// off. It starts with "real-pool tier off", which the realpool mage target
// treats as a failure: when the variable is set, nothing may skip.
const TierOff = "real-pool tier off: " + EnvDir + " is not set (set it to the absolute path of a Mooncake folder with bin/ and lib/ to run this test)"

// Tier reads EnvDir. Unset or empty: the tier is off (on false, err nil).
// Set: the tier is on, and err says why the folder cannot be used (see
// Check): a relative path, a file missing, a runtime library not found.
// Tests skip with TierOff when off and fail on err; pooltest does both.
func Tier() (dir string, on bool, err error) {
	dir = os.Getenv(EnvDir)
	if dir == "" {
		return "", false, nil
	}
	return dir, true, Check(context.Background(), dir)
}

// EnvIsolate, set to 1, says the process runs in a network namespace of
// its own where pools may make their bridge (the real-pool tier sets it):
// see Options.Isolate and IsolationAllowed.
const EnvIsolate = "KVSHARE_POOL_ISOLATE"

// IsolationAllowed reports whether EnvIsolate is 1: a test asks for
// Options.Isolate only then, so that no bridge is ever made in a
// namespace the test does not own.
func IsolationAllowed() bool { return os.Getenv(EnvIsolate) == "1" }
