package cudart

import (
	"fmt"
	"os"
	"strings"

	"github.com/ebitengine/purego"
)

// EnvLibrary names the variable that gives the CUDA runtime library's
// path (or name) when [Options.Library] is empty.
const EnvLibrary = "KVSHARE_CUDART"

// DefaultLibraries are the names tried, in order, through the loader's
// search path when neither [Options.Library] nor $KVSHARE_CUDART names
// a library. Installs of the runtime alone (no toolkit) often lack the
// unversioned name, so the versioned sonames follow it.
var DefaultLibraries = []string{"libcudart.so", "libcudart.so.13", "libcudart.so.12"}

// library is a loaded CUDA runtime with every function of [funcs]
// present and bound. A library, once loaded, is never unloaded: the CUDA
// runtime starts threads of its own, and unloading code a thread still
// runs would crash the process.
type library struct {
	name string // as given to dlopen
	fn   funcs
}

// candidates returns the names to try: the option's, else the
// variable's, else DefaultLibraries.
func candidates(option string, lookupEnv func(string) (string, bool)) []string {
	if option != "" {
		return []string{option}
	}
	if v, ok := lookupEnv(EnvLibrary); ok && v != "" {
		return []string{v}
	}
	return DefaultLibraries
}

// loadLibrary loads the first candidate the loader finds and checks that
// it has every symbol; only then are the symbols bound, so a missing
// symbol is an error naming it, never purego's panic. A candidate that
// loads but lacks a symbol ends the search: it is the runtime the loader
// would give, and a wrong one.
func loadLibrary(option string) (*library, error) {
	return loadFrom(candidates(option, os.LookupEnv))
}

// loadFrom is loadLibrary over a list of names.
func loadFrom(names []string) (*library, error) {
	var tried []string
	for _, name := range names {
		h, err := dlopen(name)
		if err != nil {
			tried = append(tried, fmt.Sprintf("%s (%v)", name, err))
			continue
		}
		lib := &library{name: name}
		addrs, err := lookUpSymbols(h, name, lib.fn.bindings())
		if err != nil {
			return nil, err
		}
		for _, b := range lib.fn.bindings() {
			purego.RegisterFunc(b.fptr, addrs[b.symbol])
		}
		return lib, nil
	}
	return nil, fmt.Errorf("%w: cannot load the CUDA runtime (set %s to its path): tried %s",
		ErrLibrary, EnvLibrary, strings.Join(tried, "; "))
}

// lookUpSymbols finds every symbol of bs; the error names each one
// missing.
func lookUpSymbols(h uintptr, name string, bs []binding) (map[string]uintptr, error) {
	addrs := make(map[string]uintptr, len(bs))
	seen := make(map[string]bool, len(bs))
	var missing []string
	for _, b := range bs {
		if seen[b.symbol] {
			continue
		}
		seen[b.symbol] = true
		addr, err := purego.Dlsym(h, b.symbol)
		if err != nil || addr == 0 {
			missing = append(missing, b.symbol)
			continue
		}
		addrs[b.symbol] = addr
	}
	if len(missing) > 0 {
		return nil, fmt.Errorf("%w: %s lacks %s", ErrLibrary, name, strings.Join(missing, ", "))
	}
	return addrs, nil
}
