package doctor

import (
	"github.com/kvshare/kvshare/mooncakesdk"
)

// checkLibrary checks the library the client will load (the config's
// [mooncake] library, else $KVSHARE_MOONCAKE_LIB, else
// libmooncake_store.so on the loader's search path) exactly as the client
// will: mooncakesdk.CheckLibrary hashes a file given by path and checks
// the pin before loading it (a refused file never runs), then looks up
// every function of store_c.h. It passes with a warning when no pin is
// set, printing the line to add.
func checkLibrary(cfg mooncakesdk.StoreConfig, lookup func(string) (string, bool)) Finding {
	m := cfg.Mooncake
	var from string
	m.Library, from = libraryName(m, lookup)
	info, err := mooncakesdk.CheckLibrary(m, nil)
	if err != nil {
		return fail(CheckLibrary, "%s (from %s, %s): %v", m.Library, from, cfg.File, err)
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

// libraryName picks the library as mooncakesdk.Open does, and says where
// the name came from.
func libraryName(m mooncakesdk.MooncakeConfig, lookup func(string) (string, bool)) (name, from string) {
	if m.Library != "" {
		return m.Library, "[mooncake] library"
	}
	if v, ok := lookup(mooncakesdk.EnvLibrary); ok && v != "" {
		return v, "$" + mooncakesdk.EnvLibrary
	}
	return mooncakesdk.DefaultLibrary, "the loader's search path"
}
