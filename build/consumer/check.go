package consumer

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/kvshare/kvshare/build/modules"
	"github.com/kvshare/kvshare/build/release"
)

// Done is the line a consumer prints last when every byte came back.
var Done = regexp.MustCompile(`(?m)^kvshare consumer: (\d+) rows, (\d+) bytes round-tripped, every byte identical$`)

// Check runs every consumer of [modules.Repo] against a proxy made
// from the repository at root, printing each step to w.
func Check(root string, w io.Writer) error {
	version, err := modules.Repo.Required(root)
	if err != nil {
		return err
	}
	tmp, err := os.MkdirTemp("", "kvshare-consumers-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)
	proxy := filepath.Join(tmp, "proxy")
	if err := release.Dist(root, modules.Repo, proxy, version, w); err != nil {
		return err
	}
	env, err := environment(tmp, proxy)
	if err != nil {
		return err
	}
	var errs []error
	for _, c := range modules.Repo.Consumers {
		start := time.Now()
		ran, err := checkOne(root, tmp, version, c, env, w)
		if err != nil {
			fmt.Fprintf(w, "consumer: FAIL %s: %v\n", c.Dir, err)
			errs = append(errs, fmt.Errorf("%s: %w", c.Dir, err))
			continue
		}
		only := ""
		if !ran {
			only = ", built only"
		}
		fmt.Fprintf(w, "consumer: ok %s%s (%.1f s)\n", c.Dir, only, time.Since(start).Seconds())
	}
	return errors.Join(errs...)
}

// environment is the go command's environment for the consumers: a
// module cache of their own (writable, so it can be removed), the proxy
// first, then this machine's module cache as a proxy (third-party
// modules already downloaded), then the usual proxy; no checksum
// database for kvshare's modules, which no public database knows.
func environment(tmp, proxy string) ([]string, error) {
	cache, err := goEnv("GOMODCACHE")
	if err != nil {
		return nil, err
	}
	upstream, err := goEnv("GOPROXY")
	if err != nil {
		return nil, err
	}
	flags, err := goEnv("GOFLAGS")
	if err != nil {
		return nil, err
	}
	proxies := []string{"file://" + filepath.ToSlash(proxy)}
	if st, err := os.Stat(filepath.Join(cache, "cache", "download")); err == nil && st.IsDir() {
		proxies = append(proxies, "file://"+filepath.ToSlash(filepath.Join(cache, "cache", "download")))
	}
	if upstream != "" {
		proxies = append(proxies, upstream)
	}
	return append(os.Environ(),
		"GOWORK=off",
		"GOMODCACHE="+filepath.Join(tmp, "modcache"),
		"GOFLAGS="+strings.TrimSpace(flags+" -modcacherw"),
		"GOPROXY="+strings.Join(proxies, ","),
		"GONOSUMDB="+modules.Prefix+"/*",
		"GOPRIVATE=",
		"GONOPROXY=",
		"GOTOOLCHAIN=local",
	), nil
}

// runTimeout bounds starting a consumer's server (when it needs one)
// and running the program.
const runTimeout = 5 * time.Minute

// checkOne copies one consumer out of the repository and builds, vets,
// vendors and runs it there. It reports ran false when it built the
// consumer but could not run it: the server it needs is not on this
// machine (a line on w says so).
func checkOne(root, tmp, version string, c modules.Consumer, env []string, w io.Writer) (ran bool, err error) {
	dir := filepath.Join(tmp, filepath.Base(c.Dir))
	if err := copyConsumer(filepath.Join(root, filepath.FromSlash(c.Dir)), dir); err != nil {
		return false, err
	}
	if err := checkGoMod(dir, version); err != nil {
		return false, err
	}
	bin := filepath.Join(tmp, "bin", filepath.Base(c.Dir))
	for _, args := range [][]string{
		{"go", "mod", "tidy"},
		{"go", "mod", "vendor"},
		{"go", "vet", "./..."},
		{"go", "build", "-o", bin, "."},
	} {
		fmt.Fprintf(w, "consumer: %s: %s\n", c.Dir, strings.Join(args, " "))
		if out, err := run(dir, env, args...); err != nil {
			return false, fmt.Errorf("%s: %w\n%s", strings.Join(args, " "), err, out)
		}
	}
	if err := checkVendor(filepath.Join(dir, "vendor", "modules.txt"), c.Forbidden); err != nil {
		return false, err
	}
	ctx, cancel := context.WithTimeout(context.Background(), runTimeout)
	defer cancel()
	srv, ran, err := startServer(ctx, c, os.Getenv, exec.LookPath, w)
	if err != nil || !ran {
		return false, err
	}
	out, err := run(dir, append(env, srv.env...), bin)
	fmt.Fprintf(w, "%s", indent(out))
	if err != nil {
		err = fmt.Errorf("running it: %w", err)
	} else {
		err = checkOutput(out)
	}
	return true, stopServer(srv, err)
}

// copyConsumer copies a consumer's folder, leaving out what tidy and
// vendor make (go.sum, vendor/) so the check starts from go.mod alone.
func copyConsumer(src, dst string) error {
	return filepath.WalkDir(src, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(src, p)
		if err != nil {
			return err
		}
		if d.IsDir() {
			if d.Name() == "vendor" {
				return filepath.SkipDir
			}
			return os.MkdirAll(filepath.Join(dst, rel), 0o755)
		}
		if rel == "go.sum" || !d.Type().IsRegular() {
			return nil
		}
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		return os.WriteFile(filepath.Join(dst, rel), data, 0o644)
	})
}

// checkGoMod refuses a consumer go.mod with a replace, or with a kvshare
// requirement at another version than the proxy holds.
func checkGoMod(dir, version string) error {
	f, err := modules.ReadGoMod(dir, ".")
	if err != nil {
		return err
	}
	var errs []error
	for _, r := range f.Replace {
		errs = append(errs, fmt.Errorf("go.mod replaces %s: a consumer takes kvshare by version only", r.Old.Path))
	}
	kvshare := 0
	for _, r := range f.Require {
		if !modules.Sibling(r.Mod.Path) {
			continue
		}
		kvshare++
		if r.Mod.Version != version {
			errs = append(errs, fmt.Errorf("go.mod requires %s at %s, but the repository's modules are at %s (move the consumer to it)", r.Mod.Path, r.Mod.Version, version))
		}
	}
	if kvshare == 0 {
		errs = append(errs, errors.New("go.mod requires no kvshare module"))
	}
	return errors.Join(errs...)
}

// checkVendor refuses a modules.txt that lists a forbidden module.
func checkVendor(name string, forbidden []string) error {
	data, err := os.ReadFile(name)
	if err != nil {
		return err
	}
	var errs []error
	sc := bufio.NewScanner(bytes.NewReader(data))
	for sc.Scan() {
		fields := strings.Fields(sc.Text())
		if len(fields) < 3 || fields[0] != "#" {
			continue
		}
		for _, f := range forbidden {
			if fields[1] == f || strings.HasPrefix(fields[1], f+"/") || !strings.Contains(f, "/") && strings.HasPrefix(fields[1], f) {
				errs = append(errs, fmt.Errorf("vendor/modules.txt lists %s %s, which this consumer must not pull in", fields[1], fields[2]))
			}
		}
	}
	return errors.Join(errs...)
}

// checkOutput wants the consumer's last word: every byte round-tripped.
func checkOutput(out string) error {
	m := Done.FindStringSubmatch(out)
	if m == nil {
		return fmt.Errorf("its output does not say every byte round-tripped (want a line matching %s)", Done)
	}
	rows, _ := strconv.Atoi(m[1])
	bytes, _ := strconv.Atoi(m[2])
	if rows == 0 || bytes == 0 {
		return fmt.Errorf("it round-tripped nothing: %q", m[0])
	}
	return nil
}

func run(dir string, env []string, args ...string) (string, error) {
	cmd := exec.Command(args[0], args[1:]...)
	cmd.Dir, cmd.Env = dir, env
	out, err := cmd.CombinedOutput()
	return string(out), err
}

func goEnv(name string) (string, error) {
	out, err := exec.Command("go", "env", name).Output()
	if err != nil {
		return "", fmt.Errorf("go env %s: %w", name, err)
	}
	return strings.TrimSpace(string(out)), nil
}

func indent(s string) string {
	if s == "" {
		return ""
	}
	return "    " + strings.ReplaceAll(strings.TrimRight(s, "\n"), "\n", "\n    ") + "\n"
}
