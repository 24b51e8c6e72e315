package pool

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"time"
)

// The files of a Mooncake folder the pool uses, relative to it.
const (
	MasterBinary   = "bin/mooncake_master"
	ProviderBinary = "bin/mooncake_client"
	Library        = "lib/libmooncake_store.so"
)

// lddTimeout bounds one ldd run; it reads headers and resolves paths.
const lddTimeout = 30 * time.Second

// Check says whether dir is a Mooncake folder this machine can run: an
// absolute path (ErrNotAbsolute), with both binaries executable and the
// library present (ErrLayout), and nothing "not found" by ldd in any of
// the three (*MissingLibrariesError, which names the libraries and the
// Debian packages that provide them).
func Check(ctx context.Context, dir string) error {
	if !filepath.IsAbs(dir) {
		return fmt.Errorf("%w: %q", ErrNotAbsolute, dir)
	}
	files := []string{MasterBinary, ProviderBinary, Library}
	for i, rel := range files {
		path := filepath.Join(dir, rel)
		info, err := os.Stat(path)
		if err != nil {
			return fmt.Errorf("%w: %w", ErrLayout, err)
		}
		if !info.Mode().IsRegular() {
			return fmt.Errorf("%w: %s is not a regular file", ErrLayout, path)
		}
		if i < 2 && info.Mode().Perm()&0o111 == 0 {
			return fmt.Errorf("%w: %s is not executable", ErrLayout, path)
		}
	}
	missing := &MissingLibrariesError{}
	seen := map[string]bool{}
	for _, rel := range files {
		path := filepath.Join(dir, rel)
		libs, err := lddMissing(ctx, path)
		if err != nil {
			return err
		}
		if len(libs) > 0 {
			missing.Files = append(missing.Files, path)
		}
		for _, lib := range libs {
			if !seen[lib] {
				seen[lib] = true
				missing.Libraries = append(missing.Libraries, lib)
			}
		}
	}
	if len(missing.Libraries) > 0 {
		sort.Strings(missing.Libraries)
		return missing
	}
	return nil
}

// lddMissing runs ldd on path and returns the libraries it reports "not
// found". A file ldd calls "not a dynamic executable" (a static binary)
// has nothing to miss.
func lddMissing(ctx context.Context, path string) ([]string, error) {
	ctx, cancel := context.WithTimeout(ctx, lddTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, "ldd", path)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	err := cmd.Run()
	if errors.Is(err, exec.ErrNotFound) {
		return nil, fmt.Errorf("%w: ldd is not installed, so the runtime libraries of %s cannot be checked", ErrLayout, path)
	}
	if ctx.Err() != nil {
		return nil, fmt.Errorf("pool: ldd %s: %w", path, context.Cause(ctx))
	}
	if err != nil {
		if strings.Contains(out.String(), "not a dynamic executable") {
			return nil, nil
		}
		return nil, fmt.Errorf("%w: ldd %s: %w: %s", ErrLayout, path, err, strings.TrimSpace(out.String()))
	}
	return parseLDD(out.Bytes()), nil
}

// parseLDD returns the sonames of ldd output lines of the form
// "\tlibfoo.so.1 => not found", in order, each once.
func parseLDD(out []byte) []string {
	var libs []string
	seen := map[string]bool{}
	sc := bufio.NewScanner(bytes.NewReader(out))
	for sc.Scan() {
		name, target, ok := strings.Cut(sc.Text(), "=>")
		if !ok || strings.TrimSpace(target) != "not found" {
			continue
		}
		name = strings.TrimSpace(name)
		if name != "" && !seen[name] {
			seen[name] = true
			libs = append(libs, name)
		}
	}
	return libs
}
