// Package targetargs carries the options of kvshare's mage targets that
// mage itself cannot pass. Mage gives a target exactly the positional
// arguments its function takes, so `release VERSION --dry-run` and
// `dist DIR [VERSION]` would read the option as another target's name.
// mage.go hands the command line to [Carry] first, which takes those
// options out and sets the environment variables the targets read
// (listed below), so both spellings work:
//
//	go run mage.go release v0.3.0 --dry-run
//	KVSHARE_RELEASE_DRY_RUN=1 go run mage.go release v0.3.0
package targetargs

import (
	"strings"

	"golang.org/x/mod/semver"
)

// The variables the targets read.
const (
	// DryRun, set to 1, makes release print its plan and change nothing.
	DryRun = "KVSHARE_RELEASE_DRY_RUN"
	// DistVersion is the version dist publishes (default: the version
	// the go.mod files require).
	DistVersion = "KVSHARE_DIST_VERSION"
)

// Carry returns args (mage's command line, program name excluded)
// without the options it carried, calling setenv for each.
func Carry(args []string, setenv func(key, value string)) []string {
	out := make([]string, 0, len(args))
	target := ""
	positional := 0
	for _, a := range args {
		switch t := strings.ToLower(a); {
		case t == "release" || t == "dist":
			target, positional = t, 0
		case target == "release" && (a == "--dry-run" || a == "-dry-run"):
			setenv(DryRun, "1")
			continue
		case target == "dist" && !strings.HasPrefix(a, "-"):
			positional++
			if positional == 2 && semver.IsValid(a) {
				setenv(DistVersion, a)
				continue
			}
		}
		out = append(out, a)
	}
	return out
}
