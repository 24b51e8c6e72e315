package doctor

import (
	"errors"
	"fmt"
	"strings"

	"github.com/kvshare/kvshare/mooncakesdk"
)

// checkLibrary checks the library the client will load (the config's
// [mooncake] library, else $KVSHARE_MOONCAKE_LIB, else
// libmooncake_store.so on the loader's search path) exactly as the client
// will: mooncakesdk.CheckLibrary hashes a file given by path and checks
// the pin before loading it (a refused file never runs), then looks up
// every function of store_c.h. A library that does not load, or is not
// Mooncake's, names the setting to change, after where the name came
// from. It passes with a warning when no pin is set, printing the line
// to add.
func checkLibrary(cfg mooncakesdk.StoreConfig, lookup func(string) (string, bool)) Finding {
	m := cfg.Mooncake
	var from librarySource
	m.Library, from = libraryName(m, lookup)
	info, err := mooncakesdk.CheckLibrary(m, nil)
	if err != nil {
		hint := ""
		if errors.Is(err, mooncakesdk.ErrLibrary) {
			hint = "\n" + from.fix(cfg.File, strings.Contains(err.Error(), "cannot load"))
		}
		return fail(CheckLibrary, "%s (from %s, %s): %v%s", m.Library, from, cfg.File, err, hint)
	}
	file := info.File
	if file == "" {
		file = info.Name
	}
	switch {
	case info.Pinned:
		return ok(CheckLibrary, "%s (from %s) sha256 %s (pinned by sdk_sha256), every store_c.h function present", file, from, info.SHA256)
	case info.SHA256 == "":
		return warn(CheckLibrary, "%s (from %s) loaded with every store_c.h function, but its file cannot be found to hash it: give [mooncake] library as a path", info.Name, from)
	}
	return warn(CheckLibrary, "%s (from %s) sha256 %s, every store_c.h function present; not pinned: any library is accepted — add sdk_sha256 = [%q] to [mooncake]",
		file, from, info.SHA256, info.SHA256)
}

// librarySource is where the library's name came from.
type librarySource int

const (
	fromConfig      librarySource = iota // [mooncake] library
	fromEnvironment                      // $KVSHARE_MOONCAKE_LIB
	fromSearchPath                       // neither: the loader's search path
)

func (s librarySource) String() string {
	switch s {
	case fromConfig:
		return "[mooncake] library"
	case fromEnvironment:
		return "$" + mooncakesdk.EnvLibrary
	}
	return "the loader's search path"
}

// fix says which setting to change when the library named from s does not
// load (notLoaded) or is not Mooncake's; file is the store config.
func (s librarySource) fix(file string, notLoaded bool) string {
	switch s {
	case fromConfig:
		return fmt.Sprintf("change [mooncake] library in %s to the path of a %s built with store_c.h", file, mooncakesdk.DefaultLibrary)
	case fromEnvironment:
		return fmt.Sprintf("change the %s variable to the path of a %s built with store_c.h (%s sets no [mooncake] library, which would take precedence)",
			mooncakesdk.EnvLibrary, mooncakesdk.DefaultLibrary, file)
	}
	found := "did not find " + mooncakesdk.DefaultLibrary
	if !notLoaded {
		found = "found a " + mooncakesdk.DefaultLibrary + " that is not Mooncake's"
	}
	return fmt.Sprintf("the loader's search path %s: name the library by path, with [mooncake] library in %s or the %s variable",
		found, file, mooncakesdk.EnvLibrary)
}

// libraryName picks the library as mooncakesdk.Open does, and says where
// the name came from.
func libraryName(m mooncakesdk.MooncakeConfig, lookup func(string) (string, bool)) (string, librarySource) {
	if m.Library != "" {
		return m.Library, fromConfig
	}
	if v, ok := lookup(mooncakesdk.EnvLibrary); ok && v != "" {
		return v, fromEnvironment
	}
	return mooncakesdk.DefaultLibrary, fromSearchPath
}
