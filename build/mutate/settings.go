package mutate

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
)

// Gremlins is the mutation tester, pinned; go install builds it from
// the module proxy.
const Gremlins = "github.com/go-gremlins/gremlins/cmd/gremlins@v0.6.0"

// DefaultModules are the modules a run tests when none are named: those
// with an efficacy goal.
var DefaultModules = []string{"keys", "rowbatch", "scheduler", "binding", "mooncakesdk", "drivekit", "mooncakedrv", "memdrv"}

// Settings are a run's options.
type Settings struct {
	// Modules are the module folders to test.
	Modules []string
	// Files, if set, limits mutation to module-relative paths it matches.
	Files *regexp.Regexp
	// Coefficient and Workers are gremlins' timeout coefficient and
	// workers.
	Coefficient, Workers int
	// Goal is the efficacy a module must reach, in percent.
	Goal float64
}

// The variables [FromEnv] reads.
const (
	EnvModules     = "KVSHARE_MUTATE_MODULES"
	EnvFiles       = "KVSHARE_MUTATE_FILES"
	EnvCoefficient = "KVSHARE_MUTATE_COEFFICIENT"
	EnvWorkers     = "KVSHARE_MUTATE_WORKERS"
	EnvGoal        = "KVSHARE_MUTATE_GOAL"
)

// FromEnv reads the settings from the environment (getenv), checking
// that each named module is a folder with a go.mod under root. The
// defaults: [DefaultModules], every file, coefficient 10, one worker, a
// goal of 95 %: with these, two runs in a row on a loaded two-core
// machine give the same figures.
func FromEnv(root string, getenv func(string) string) (Settings, error) {
	s := Settings{Modules: DefaultModules, Coefficient: 10, Workers: 1, Goal: 95}
	if v := getenv(EnvModules); v != "" {
		s.Modules = nil
		for _, m := range strings.Split(v, ",") {
			if m = strings.TrimSpace(m); m == "" {
				continue
			}
			if _, err := os.Stat(filepath.Join(root, m, "go.mod")); err != nil || m == "." {
				return s, fmt.Errorf("mutate: %s: %q is not a module folder", EnvModules, m)
			}
			s.Modules = append(s.Modules, filepath.Clean(m))
		}
	}
	if v := getenv(EnvFiles); v != "" {
		re, err := regexp.Compile(v)
		if err != nil {
			return s, fmt.Errorf("mutate: %s: %w", EnvFiles, err)
		}
		s.Files = re
	}
	for _, o := range []struct {
		name string
		dst  *int
	}{{EnvCoefficient, &s.Coefficient}, {EnvWorkers, &s.Workers}} {
		if v := getenv(o.name); v != "" {
			n, err := strconv.Atoi(v)
			if err != nil || n < 1 {
				return s, fmt.Errorf("mutate: %s=%q: want a positive integer", o.name, v)
			}
			*o.dst = n
		}
	}
	if v := getenv(EnvGoal); v != "" {
		g, err := strconv.ParseFloat(v, 64)
		if err != nil || g < 0 || g > 100 {
			return s, fmt.Errorf("mutate: %s=%q: want a percentage", EnvGoal, v)
		}
		s.Goal = g
	}
	return s, nil
}
