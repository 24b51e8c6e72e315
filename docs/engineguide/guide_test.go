package engineguide_test

import (
	"flag"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/kvshare/kvshare/mooncakesdk"
	"github.com/kvshare/kvshare/redisdrv"
)

var update = flag.Bool("update", false, "write the code's regions into the guide's blocks")

// guidePath is the guide, beside this module's folder; readmePath the
// repository's README, whose one Go block is region readmeRegion.
const (
	guidePath    = "../engine-guide.md"
	readmePath   = "../../README.md"
	readmeRegion = "readme"
)

var (
	regionStart = regexp.MustCompile(`^\s*// guide:([a-z]+)$`)
	regionEnd   = regexp.MustCompile(`^\s*// guide:end$`)
	blockMarker = regexp.MustCompile(`^<!-- code: ([a-z]+) -->$`)
)

// regions reads every region of the package's Go files: the lines
// between `// guide:NAME` and `// guide:end`, dedented, blank lines at
// either end dropped.
func regions(t *testing.T) map[string]string {
	t.Helper()
	files, err := filepath.Glob("*.go")
	require.NoError(t, err)
	for _, dir := range []string{"roundtrip", "readme"} { // the guide's whole program; the README's
		more, err := filepath.Glob(dir + "/*.go")
		require.NoError(t, err)
		files = append(files, more...)
	}
	out := map[string]string{}
	for _, f := range files {
		src, err := os.ReadFile(f)
		require.NoError(t, err)
		name, start := "", 0
		lines := strings.Split(string(src), "\n")
		for i, line := range lines {
			switch m := regionStart.FindStringSubmatch(line); {
			case name == "" && m != nil && m[1] != "end":
				name, start = m[1], i+1
				_, dup := out[name]
				require.False(t, dup, "%s:%d: region %q defined twice", f, i+1, name)
			case name != "" && m != nil && m[1] != "end":
				t.Fatalf("%s:%d: region %q begins inside region %q", f, i+1, m[1], name)
			case name != "" && regionEnd.MatchString(line):
				out[name] = dedent(lines[start:i])
				name = ""
			}
		}
		require.Empty(t, name, "%s: region %q has no // guide:end", f, name)
	}
	return out
}

// dedent removes the lines' common leading tabs and the blank lines at
// either end.
func dedent(lines []string) string {
	for len(lines) > 0 && strings.TrimSpace(lines[0]) == "" {
		lines = lines[1:]
	}
	for len(lines) > 0 && strings.TrimSpace(lines[len(lines)-1]) == "" {
		lines = lines[:len(lines)-1]
	}
	indent := -1
	for _, l := range lines {
		if strings.TrimSpace(l) == "" {
			continue
		}
		n := len(l) - len(strings.TrimLeft(l, "\t"))
		if indent < 0 || n < indent {
			indent = n
		}
	}
	out := make([]string, len(lines))
	for i, l := range lines {
		if strings.TrimSpace(l) != "" {
			out[i] = l[indent:]
		}
	}
	return strings.Join(out, "\n")
}

// block is one fenced block of the guide: its language, its marker's
// region name ("" when none), its text and where its text starts and
// ends (line indices, the fences excluded).
type block struct {
	lang, region, text string
	first, end         int
}

func blocks(t *testing.T, lines []string) []block {
	t.Helper()
	var out []block
	for i := 0; i < len(lines); i++ {
		lang, ok := strings.CutPrefix(lines[i], "```")
		if !ok {
			continue
		}
		b := block{lang: lang, first: i + 1}
		if i > 0 {
			if m := blockMarker.FindStringSubmatch(lines[i-1]); m != nil {
				b.region = m[1]
			}
		}
		for i++; i < len(lines) && lines[i] != "```"; i++ {
		}
		require.Less(t, i, len(lines), "%s:%d: block not closed", guidePath, b.first)
		b.end = i
		b.text = strings.Join(lines[b.first:b.end], "\n")
		out = append(out, b)
	}
	return out
}

// Every Go block of the guide is a region of this package's code, and
// every region is in the guide: the guide's code is the code the tests
// build and run. With -update, the regions are written into the guide.
func TestGuideMatchesCode(t *testing.T) {
	code := regions(t)
	delete(code, readmeRegion)
	matchDoc(t, guidePath, code)
}

// The README's Go block is the program in readme/, which its test runs.
func TestReadmeMatchesCode(t *testing.T) {
	code := regions(t)
	matchDoc(t, readmePath, map[string]string{readmeRegion: code[readmeRegion]})
}

// matchDoc checks that every Go block of the doc at path is one of
// code's regions and every region is in the doc; with -update it writes
// the regions into the doc first.
func matchDoc(t *testing.T, path string, code map[string]string) {
	src, err := os.ReadFile(path)
	require.NoError(t, err)
	lines := strings.Split(string(src), "\n")
	bs := blocks(t, lines)

	if *update {
		for i := len(bs) - 1; i >= 0; i-- { // from the end, so earlier indices hold
			b := bs[i]
			if text, ok := code[b.region]; ok && b.lang == "go" {
				lines = slices.Replace(lines, b.first, b.end, strings.Split(text, "\n")...)
			}
		}
		require.NoError(t, os.WriteFile(path, []byte(strings.Join(lines, "\n")), 0o644))
		bs = blocks(t, lines)
	}

	used := map[string]bool{}
	for _, b := range bs {
		if b.lang != "go" {
			continue
		}
		where := path + ":" + strconv.Itoa(b.first)
		if b.region == "" {
			t.Errorf("%s: a go block without a <!-- code: NAME --> line before it", where)
			continue
		}
		want, ok := code[b.region]
		if !ok {
			t.Errorf("%s: region %q is in no Go file of docs/engineguide meant for this page", where, b.region)
			continue
		}
		assert.False(t, used[b.region], "%s: region %q shown twice", where, b.region)
		used[b.region] = true
		assert.Equal(t, want, b.text, "%s: block %q differs from its code (go test -run MatchesCode -update rewrites it)", where, b.region)
	}
	for name := range code {
		assert.True(t, used[name], "region %q is not in %s", name, path)
	}
}

// The guide's store files are ones their stores' loaders accept: the
// Mooncake file with its pin, the Redis file as it stands.
func TestGuideStoreConfigLoads(t *testing.T) {
	src, err := os.ReadFile(guidePath)
	require.NoError(t, err)
	var mooncake, redis int
	for _, b := range blocks(t, strings.Split(string(src), "\n")) {
		if b.lang != "toml" {
			continue
		}
		path := filepath.Join(t.TempDir(), "store.toml")
		require.NoError(t, os.WriteFile(path, []byte(b.text), 0o644))
		switch {
		case strings.Contains(b.text, "[mooncake]"):
			mooncake++
			cfg, err := mooncakesdk.LoadStoreConfig(path)
			require.NoError(t, err, "%s:%d", guidePath, b.first)
			assert.NotEmpty(t, cfg.Mooncake.SDKSHA256, "the guide's config pins the library")
			assert.NotEmpty(t, cfg.Blob.KeyPrefix)
		case strings.Contains(b.text, "[redis]"):
			redis++
			cfg, err := redisdrv.LoadStoreConfig(path)
			require.NoError(t, err, "%s:%d", guidePath, b.first)
			assert.NotEmpty(t, cfg.Blob.KeyPrefix)
		default:
			t.Errorf("%s:%d: a store file for no store the guide shows", guidePath, b.first)
		}
	}
	assert.Equal(t, 1, mooncake, "the guide shows one Mooncake store file")
	assert.Equal(t, 1, redis, "the guide shows one Redis store file")
}

// The guide's complete program — imports, every error path — fits in
// 80 lines of code, blank and comment lines not counted.
func TestTheProgramFitsInEightyLines(t *testing.T) {
	program, ok := regions(t)["program"]
	require.True(t, ok, "the guide's program is region \"program\" of roundtrip/main.go")
	code := 0
	for _, line := range strings.Split(program, "\n") {
		if l := strings.TrimSpace(line); l != "" && !strings.HasPrefix(l, "//") {
			code++
		}
	}
	assert.LessOrEqual(t, code, 80, "lines of code in the guide's program")
	assert.True(t, strings.HasPrefix(program, "// Command roundtrip") && strings.Contains(program, "\npackage main\n"),
		"the region is the whole file, package clause and imports included")
}
