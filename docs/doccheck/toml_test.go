package doccheck

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/kvshare/kvshare/diskdrv"
	"github.com/kvshare/kvshare/mooncakesdk"
	"github.com/kvshare/kvshare/redisdrv"
	"github.com/kvshare/kvshare/storeconfig"
	"github.com/kvshare/kvshare/storeconfig/tomlfile"
)

// TestTOMLBlocksLoad reads every ```toml block of the documentation as
// the store file it is, with its store's own loader.
func TestTOMLBlocksLoad(t *testing.T) {
	r := openRepo(t)
	blocks := 0
	for _, name := range r.files(t, ".md") {
		for _, b := range r.doc(t, name).fences {
			if b.lang == "toml" {
				blocks++
				for _, problem := range checkTOML(t, name, b) {
					t.Error(problem)
				}
			}
		}
	}
	require.NotZero(t, blocks, "no ```toml block in the documentation: is the walk reading it?")
}

func TestCheckTOMLCases(t *testing.T) {
	const mooncake = "[mooncake]\nmaster = \"127.0.0.1:50051\"\nmetadata_server = \"P2PHANDSHAKE\"\nlocal_hostname = \"127.0.0.1\"\n"
	for _, tc := range []struct {
		name   string
		marker string
		text   string
		want   []string // each problem's start, in order; none: the block loads
	}{
		{"a Mooncake file", "", "[blob]\nkey_prefix = \"kv/llama\"\n\n" + mooncake, nil},
		{"a key prefix ending in a slash", "", "[blob]\nkey_prefix = \"kv/llama/\"\n\n" + mooncake,
			[]string{"doc.md:12: mooncakesdk.ParseStoreConfig refuses the block: store config: [blob] key_prefix: not a usable key prefix"}},
		{"a Redis file", "", "[redis]\naddress = \"redis:6379\"\n", nil},
		{"a Redis file without its address", "", "[redis]\ndb = 1\n",
			[]string{"doc.md:11: redisdrv.ParseStoreConfig refuses the block: store config: [redis] address: is required"}},
		{"a fragment without what the store requires", "<!-- toml: fragment -->", "[redis]\ndb = 1\n", nil},
		{"a fragment with an unknown key", "<!-- toml: fragment -->", "[mooncake]\nprotocol = \"tcp\"\nworker = 4\n",
			[]string{"doc.md:13: mooncakesdk.ParseStoreConfig refuses the block: store config: [mooncake] worker: unknown key"}},
		{"an unknown marker", "<!-- toml: sample -->", "[redis]\naddress = \"redis:6379\"\n",
			[]string{`doc.md:10: unknown marker "<!-- toml: sample -->"`}},
		{"a disk file", "", "[disk]\ndir = \"/var/kv\"\ncapacity = 0\n", nil},
		{"a relative disk folder", "", "[disk]\ndir = \"kv\"\ncapacity = 0\n",
			[]string{"doc.md:12: diskdrv.LoadStoreFile refuses the block: store config: [disk] dir: must be an absolute path"}},
		{"an embedded store's file", "", "[memory]\ncapacity = 1048576\n", nil},
		{"a node section alone", "", "[node]\nmode = \"0999\"\n",
			[]string{"doc.md:12: storeconfig/tomlfile refuses the block: store config: [node] mode: wants permission bits"}},
		{"two stores", "", "[memory]\ncapacity = 0\n\n" + mooncake,
			[]string{"doc.md:10: the block holds [mooncake] and [memory]: a store file is for one store"}},
		{"malformed TOML", "", "[redis]\naddress = \n",
			[]string{"doc.md:12: the block is not TOML: store config: "}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := checkTOML(t, "doc.md", fence{line: 10, lang: "toml", marker: tc.marker, text: tc.text})
			require.Len(t, got, len(tc.want), "%q", got)
			for i, w := range tc.want {
				assert.True(t, strings.HasPrefix(got[i], w), "got %q, want it to start %q", got[i], w)
			}
		})
	}
}

// tomlMarker is the HTML comment before a block that says how to read
// it; "fragment" is the only one known.
var tomlMarker = regexp.MustCompile(`^<!--\s*toml:\s*(.*?)\s*-->$`)

// checkTOML reads one ```toml block of the file name as a store file
// and returns what is wrong with it, each problem "file:line: what".
func checkTOML(t *testing.T, name string, b fence) []string {
	fragment := false
	if m := tomlMarker.FindStringSubmatch(b.marker); m != nil {
		if m[1] != "fragment" {
			return []string{fmt.Sprintf("%s:%d: unknown marker %q before a ```toml block (known: <!-- toml: fragment -->)", name, b.line, b.marker)}
		}
		fragment = true
	}
	loader, err := loadStoreFile(t, []byte(b.text))
	var problems []string
	for _, e := range refusals(err) {
		var se *storeconfig.Error
		if !errors.As(e, &se) {
			problems = append(problems, fmt.Sprintf("%s:%d: %v", name, b.line, e))
			continue
		}
		if fragment && strings.HasPrefix(se.Reason, "is required") {
			continue
		}
		line := b.line + se.Line
		if se.Line == 0 {
			n := keyLine(b.text, se.Section, se.Key)
			if n == 0 { // a key left out: its section's header
				n = keyLine(b.text, se.Section, "")
			}
			line = b.line + n
		}
		plain := *se
		plain.File, plain.Line, plain.Column = "", 0, 0
		if loader == "" {
			problems = append(problems, fmt.Sprintf("%s:%d: the block is not TOML: %v", name, line, &plain))
			continue
		}
		problems = append(problems, fmt.Sprintf("%s:%d: %s refuses the block: %v", name, line, loader, &plain))
	}
	return problems
}

// stores are the sections that say which store a file is for, each
// with its loader.
var stores = []string{"mooncake", "redis", "disk", "memory"}

// loadStoreFile loads data with the loader of the store its sections
// name, and says which loader that was ("" for data that is not TOML).
// A file of none of the stores ([blob], [scope], [node] alone) is read
// by package tomlfile, which checks the sections every reader knows.
func loadStoreFile(t *testing.T, data []byte) (string, error) {
	f := tomlfile.Parse("block", data, map[string][]string{"mooncake": nil, "redis": nil})
	if !f.Parsed() {
		return "", f.Finish()
	}
	var held []string
	for _, s := range stores {
		if f.Has(s) {
			held = append(held, s)
		}
	}
	if len(held) > 1 {
		return "", fmt.Errorf("the block holds [%s]: a store file is for one store", strings.Join(held, "] and ["))
	}
	switch strings.Join(held, "") {
	case "mooncake":
		_, err := mooncakesdk.ParseStoreConfig("block", data)
		return "mooncakesdk.ParseStoreConfig", err
	case "redis":
		_, err := redisdrv.ParseStoreConfig("block", data)
		return "redisdrv.ParseStoreConfig", err
	case "disk":
		path := filepath.Join(t.TempDir(), "store.toml")
		require.NoError(t, os.WriteFile(path, data, 0o600))
		_, err := diskdrv.LoadStoreFile(path)
		return "diskdrv.LoadStoreFile", err
	}
	f = tomlfile.Parse("block", data, nil)
	f.Blob()
	f.Memory()
	return "storeconfig/tomlfile", f.Finish()
}

// refusals is every error err joins, one by one.
func refusals(err error) []error {
	if err == nil {
		return nil
	}
	if j, ok := err.(interface{ Unwrap() []error }); ok {
		if _, single := err.(*storeconfig.Error); !single {
			var out []error
			for _, e := range j.Unwrap() {
				out = append(out, refusals(e)...)
			}
			return out
		}
	}
	return []error{err}
}

var (
	tableHeader = regexp.MustCompile(`^\s*\[\s*([^\]\s]+)\s*\]`)
	keyLineRE   = regexp.MustCompile(`^\s*([A-Za-z0-9_-]+)\s*=`)
)

// keyLine is the line, counted from 1 inside text, of section's key (of
// the section's header when key is ""), or 0 when text has neither.
func keyLine(text, section, key string) int {
	current := ""
	for i, line := range strings.Split(text, "\n") {
		if m := tableHeader.FindStringSubmatch(line); m != nil {
			current = m[1]
			if current == section && key == "" {
				return i + 1
			}
			continue
		}
		if m := keyLineRE.FindStringSubmatch(line); m != nil && current == section && m[1] == key {
			return i + 1
		}
	}
	return 0
}
