package mooncakesdk

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"log/slog"
	"os"
	"slices"
	"strings"

	"github.com/ebitengine/purego"
)

// DefaultLibrary is the library's name when neither the config nor
// $KVSHARE_MOONCAKE_LIB gives a path: the loader's search path finds it.
const DefaultLibrary = "libmooncake_store.so"

// library is a loaded libmooncake_store.so whose nineteen symbols are all
// present. A library, once loaded, is never unloaded, not even one that
// was refused after loading: its static constructors may have started
// threads, and unloading code a thread still runs would crash.
type library struct {
	name   string // as given to dlopen
	file   string // the file the loader mapped
	sha256 string // of file, lower-case hex
	fn     storeFuncs
}

// libraryName picks the library: the config's path, else
// $KVSHARE_MOONCAKE_LIB, else DefaultLibrary.
func libraryName(m MooncakeConfig, lookupEnv func(string) (string, bool)) string {
	if m.Library != "" {
		return m.Library
	}
	if v, ok := lookupEnv(EnvLibrary); ok && v != "" {
		return v
	}
	return DefaultLibrary
}

// loadLibrary loads and checks the library. A name with a slash is a
// path: its file is hashed and checked against the pin before it is
// loaded, so a refused file never runs. A bare name is left to the
// loader's search path; the file it chose is found afterwards (from the
// process's memory map), hashed and checked.
func loadLibrary(m MooncakeConfig, lookupEnv func(string) (string, bool), logger *slog.Logger) (*library, error) {
	lib := &library{name: libraryName(m, lookupEnv)}
	if strings.Contains(lib.name, "/") {
		lib.file = lib.name
		sum, err := fileSHA256(lib.file)
		if err != nil {
			return nil, fmt.Errorf("%w: %s: %w", ErrLibrary, lib.file, err)
		}
		lib.sha256 = sum
		if err := checkPin(m.SDKSHA256, lib); err != nil {
			return nil, err
		}
	}

	h, err := dlopen(lib.name)
	if err != nil {
		return nil, fmt.Errorf("%w: cannot load %s: %w", ErrLibrary, lib.name, err)
	}

	addrs, err := lookUpSymbols(h, lib.name)
	if err != nil {
		return nil, err
	}

	if lib.file == "" {
		file, err := mappedFile(addrs["mooncake_store_create"])
		if err == nil {
			lib.file = file
			lib.sha256, err = fileSHA256(file)
		}
		if err != nil {
			if len(m.SDKSHA256) > 0 {
				return nil, fmt.Errorf("%w: %s: cannot find the loaded file to check sdk_sha256 (give [mooncake] library as a path): %w", ErrLibraryHash, lib.name, err)
			}
			logger.Warn("mooncakesdk: cannot find the loaded library's file; its hash is unknown", "name", lib.name, "err", err)
		}
		if err := checkPin(m.SDKSHA256, lib); err != nil {
			return nil, err
		}
	}

	for name, fptr := range lib.fn.bindings() {
		purego.RegisterFunc(fptr, addrs[name])
	}
	logger.Info("mooncakesdk: library loaded", "name", lib.name, "path", lib.file, "sha256", lib.sha256)
	return lib, nil
}

// lookUpSymbols finds every symbol of store_c.h; the error names each one
// missing.
func lookUpSymbols(h uintptr, name string) (map[string]uintptr, error) {
	addrs := make(map[string]uintptr, len(symbolNames))
	var missing []string
	for _, sym := range symbolNames {
		addr, err := purego.Dlsym(h, sym)
		if err != nil || addr == 0 {
			missing = append(missing, sym)
			continue
		}
		addrs[sym] = addr
	}
	if len(missing) > 0 {
		return nil, fmt.Errorf("%w: %s lacks %d of the %d store_c.h functions: %s",
			ErrLibrary, name, len(missing), len(symbolNames), strings.Join(missing, ", "))
	}
	return addrs, nil
}

// checkPin refuses lib when pins is set and holds no match for its hash.
func checkPin(pins []string, lib *library) error {
	if len(pins) == 0 {
		return nil
	}
	if slices.ContainsFunc(pins, func(p string) bool { return strings.EqualFold(p, lib.sha256) }) {
		return nil
	}
	return fmt.Errorf("%w: %s has SHA-256 %s, not one of [mooncake] sdk_sha256 (%s)",
		ErrLibraryHash, lib.file, lib.sha256, strings.Join(pins, ", "))
}

func fileSHA256(path string) (string, error) {
	f, err := os.Open(path)
	if err != nil {
		return "", err
	}
	defer f.Close()
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		return "", err
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}

// LibraryInfo is what loading a store library found.
type LibraryInfo struct {
	// Name is the library as given to the loader: the config's path,
	// $KVSHARE_MOONCAKE_LIB, or DefaultLibrary.
	Name string
	// File is the file the loader mapped, "" when it cannot be found
	// (then SHA256 is "" too).
	File   string
	SHA256 string
	// Pinned: the config's sdk_sha256 lists SHA256. False with no pin.
	Pinned bool
}

// CheckLibrary loads the library m names, as [Open] does (a path is
// hashed and checked against sdk_sha256 before it is loaded), looks up
// every function of store_c.h, and reports what it found, without
// creating a client. Its errors are Open's: [ErrLibrary] naming each
// missing symbol or the file that cannot be read or loaded,
// [ErrLibraryHash] naming the file, its hash and the pins.
func CheckLibrary(m MooncakeConfig, logger *slog.Logger) (LibraryInfo, error) {
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	lib, err := loadLibrary(m, os.LookupEnv, logger)
	if err != nil {
		return LibraryInfo{Name: libraryName(m, os.LookupEnv)}, err
	}
	info := LibraryInfo{Name: lib.name, File: lib.file, SHA256: lib.sha256}
	info.Pinned = slices.ContainsFunc(m.SDKSHA256, func(p string) bool { return strings.EqualFold(p, lib.sha256) })
	return info, nil
}
