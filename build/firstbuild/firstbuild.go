// Package firstbuild checks a new user's first build: the kvshare
// command, built with an empty build cache and an empty module cache as
// on a fresh machine, must print nothing but the go command's download
// lines, and its round trip nothing but its own lines. A dependency
// whose C code warns on its first compile (go-nvml's does, pages of it)
// reads to a new user as a broken build; this check keeps such code out
// of the default build.
package firstbuild

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
)

// Check builds ./tools/cmd/kvshare from the workspace at root with fresh
// caches and runs `kvshare roundtrip`, printing what it saw to w.
func Check(root string, w io.Writer) error {
	tmp, err := os.MkdirTemp("", "kvshare-firstbuild-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)
	env, err := freshCaches(tmp)
	if err != nil {
		return err
	}
	bin := filepath.Join(tmp, "kvshare")
	fmt.Fprintln(w, "quiet: go build ./tools/cmd/kvshare with an empty build and module cache")
	build := exec.Command("go", "build", "-o", bin, "./tools/cmd/kvshare")
	build.Dir, build.Env = root, env
	out, err := build.CombinedOutput()
	if err != nil {
		return fmt.Errorf("quiet: the first build failed: %w\n%s", err, out)
	}
	if noise := Noise(string(out)); len(noise) > 0 {
		return fmt.Errorf("quiet: the first build printed %d lines besides the go command's downloads, starting with:\n  %s", len(noise), strings.Join(first(noise, 8), "\n  "))
	}
	var stdout, stderr bytes.Buffer
	rt := exec.Command(bin, "roundtrip")
	rt.Dir, rt.Stdout, rt.Stderr = root, &stdout, &stderr
	if err := rt.Run(); err != nil {
		return fmt.Errorf("quiet: kvshare roundtrip: %w\n%s%s", err, stdout.String(), stderr.String())
	}
	fmt.Fprint(w, stdout.String())
	return Own(stdout.String(), stderr.String())
}

// Noise is every line of a build's output that is not the go command
// saying it downloads a module.
func Noise(out string) []string {
	var lines []string
	for _, l := range strings.Split(out, "\n") {
		if l != "" && !strings.HasPrefix(l, "go: downloading ") && !strings.HasPrefix(l, "go: finding ") {
			lines = append(lines, l)
		}
	}
	return lines
}

// Own checks that a round trip printed only its own lines: the first
// names the command, standard error is empty.
func Own(stdout, stderr string) error {
	var errs []error
	if stderr != "" {
		errs = append(errs, fmt.Errorf("kvshare roundtrip wrote to standard error:\n%s", stderr))
	}
	if !strings.HasPrefix(stdout, "kvshare roundtrip: ") {
		errs = append(errs, fmt.Errorf("kvshare roundtrip's first line is not its own: %q", firstLine(stdout)))
	}
	if len(errs) > 0 {
		return fmt.Errorf("quiet: %w", errors.Join(errs...))
	}
	return nil
}

// freshCaches is this environment with an empty build cache and an
// empty (writable, so removable) module cache, which fills from this
// machine's module cache first, then the usual proxy.
func freshCaches(tmp string) ([]string, error) {
	get := func(name string) (string, error) {
		out, err := exec.Command("go", "env", name).Output()
		if err != nil {
			return "", fmt.Errorf("go env %s: %w", name, err)
		}
		return strings.TrimSpace(string(out)), nil
	}
	cache, err := get("GOMODCACHE")
	if err != nil {
		return nil, err
	}
	upstream, err := get("GOPROXY")
	if err != nil {
		return nil, err
	}
	flags, err := get("GOFLAGS")
	if err != nil {
		return nil, err
	}
	proxy := upstream
	if st, err := os.Stat(filepath.Join(cache, "cache", "download")); err == nil && st.IsDir() {
		proxy = "file://" + filepath.ToSlash(filepath.Join(cache, "cache", "download")) + "," + upstream
	}
	return append(os.Environ(),
		"GOCACHE="+filepath.Join(tmp, "gocache"),
		"GOMODCACHE="+filepath.Join(tmp, "modcache"),
		"GOPROXY="+proxy,
		"GOFLAGS="+strings.TrimSpace(flags+" -modcacherw"),
	), nil
}

func first(lines []string, n int) []string {
	if len(lines) > n {
		return lines[:n]
	}
	return lines
}

func firstLine(s string) string {
	line, _, _ := strings.Cut(s, "\n")
	return line
}
