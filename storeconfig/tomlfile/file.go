package tomlfile

import (
	"errors"
	"fmt"
	"os"
	"slices"
	"strings"

	"github.com/BurntSushi/toml"

	"github.com/kvshare/kvshare/storeconfig"
)

// A File is one store file being decoded. Decode its sections, then call
// [File.Finish] for the refusals.
type File struct {
	name     string
	md       toml.MetaData
	raw      map[string]toml.Primitive
	known    map[string][]string // section → its keys, [blob] included
	parsed   bool
	findings storeconfig.Findings
	refused  map[string]bool // "section" or "section.key" already refused
	memory   bool            // [memory] was decoded (Memory)
	disk     bool            // [disk] was decoded (Disk)
	node     bool            // [node] was decoded (Node)
	scope    bool            // [scope] was decoded (Scope)
}

// Read reads and parses the store file at path; see [Parse].
func Read(path string, sections map[string][]string) *File {
	data, err := os.ReadFile(path)
	if err != nil {
		f := &File{name: path, known: known(sections), refused: map[string]bool{}}
		f.findings.Add(&storeconfig.Error{File: path, Reason: "cannot read the file", Err: err})
		return f
	}
	return Parse(path, data, sections)
}

// Parse parses data, a store file named name (for its refusals).
// sections lists the store sections the file may hold, each with its
// keys exactly as spelled; [blob] is always known. A file that does not
// parse as TOML has one refusal, its position named; its sections then
// read as absent.
func Parse(name string, data []byte, sections map[string][]string) *File {
	f := &File{name: name, known: known(sections), refused: map[string]bool{}}
	md, err := toml.Decode(string(data), &f.raw)
	if err != nil {
		f.findings.Add(parseError(name, err))
		return f
	}
	f.md, f.parsed = md, true
	return f
}

func known(sections map[string][]string) map[string][]string {
	k := map[string][]string{storeconfig.BlobSection: storeconfig.BlobKeys, storeconfig.MemorySection: storeconfig.MemoryKeys,
		storeconfig.DiskSection: storeconfig.DiskKeys,
		storeconfig.NodeSection: storeconfig.NodeKeys, storeconfig.ScopeSection: storeconfig.ScopeKeys}
	for s, keys := range sections {
		k[s] = keys
	}
	return k
}

// parseError turns a TOML syntax error into a refusal with its position.
func parseError(file string, err error) *storeconfig.Error {
	var perr toml.ParseError
	if errors.As(err, &perr) {
		return &storeconfig.Error{File: file, Line: perr.Position.Line, Column: perr.Position.Col, Reason: "malformed TOML", Err: perr}
	}
	return &storeconfig.Error{File: file, Reason: "malformed TOML", Err: err}
}

// Name is the file's name, as its refusals give it.
func (f *File) Name() string { return f.name }

// Parsed reports whether the file parsed as TOML.
func (f *File) Parsed() bool { return f.parsed }

// Has reports whether the file holds the section.
func (f *File) Has(section string) bool { return f.parsed && f.md.IsDefined(section) }

// Refused reports whether the section (key "") or the section's key was
// refused already, so that a later range check does not refuse it twice.
func (f *File) Refused(section, key string) bool {
	return f.refused[section] || key != "" && f.refused[section+"."+key]
}

// Refuse records a refusal of section's key ("" for the section itself).
func (f *File) Refuse(section, key, format string, args ...any) {
	f.findings.Addf(f.name, section, key, format, args...)
	f.refused[section] = f.refused[section] || key == ""
	if key != "" {
		f.refused[section+"."+key] = true
	}
}

// Add records a refusal made elsewhere (a value's range, checked after
// decoding) unless its section or key was refused already.
func (f *File) Add(e *storeconfig.Error) {
	if !f.Refused(e.Section, e.Key) {
		f.findings.Add(e)
	}
}

// Blob decodes the [blob] section, with the defaults for keys left out
// (KeyPrefix stays empty when left out: storeconfig.Blob.WithDefaults
// fills it), and the [scope] section ([File.Scope]) into its Scope, and
// checks their values.
func (f *File) Blob() storeconfig.Blob {
	b := storeconfig.Blob{Scope: f.Scope()}
	if s := f.Section(storeconfig.BlobSection); s != nil {
		b.KeyPrefix, _ = s.String(storeconfig.KeyKeyPrefix, "")
		b.RowsPerCall = int(s.Int(storeconfig.KeyRowsPerCall, 0))
		b.BytesPerCall = s.Int(storeconfig.KeyBytesPerCall, 0)
	}
	for _, e := range b.Check(f.name) {
		f.Add(e)
	}
	return b
}

// Memory decodes the [memory] section, with the defaults for keys left
// out (storeconfig.Memory.WithDefaults), and checks its values; a file
// without the section gives the zero Memory (Has says whether it holds
// one). capacity is required in the section.
func (f *File) Memory() storeconfig.Memory {
	f.memory = true
	var m storeconfig.Memory
	s := f.Section(storeconfig.MemorySection)
	if s == nil {
		return m
	}
	if s.Type(storeconfig.KeyCapacity) == "" {
		s.Refuse(storeconfig.KeyCapacity, "is required: the bytes the store takes up front (0: a store that holds nothing)")
	}
	m.Capacity = s.Int(storeconfig.KeyCapacity, 0)
	m.ChunkBytes = s.Int(storeconfig.KeyChunkBytes, 0)
	m.HugePages, _ = s.String(storeconfig.KeyHugePages, storeconfig.HugePagesNone)
	m.Lock = s.Bool(storeconfig.KeyLock, false)
	m.Workers = int(s.Int(storeconfig.KeyWorkers, storeconfig.DefaultMemoryWorkers))
	// Given, an empty huge_pages is out of range, not left out; workers
	// = 0 is the default, as in memdrv.Options.
	if m.HugePages == "" {
		s.Refuse(storeconfig.KeyHugePages, "must be one of %s, got \"\"", strings.Join(quoted(storeconfig.HugePageSizes), ", "))
	}
	m = m.WithDefaults()
	for _, e := range m.Check(f.name) {
		f.Add(e)
	}
	return m
}

// quoted is each of ss in double quotes.
func quoted(ss []string) []string {
	out := make([]string, len(ss))
	for i, s := range ss {
		out[i] = fmt.Sprintf("%q", s)
	}
	return out
}

// Finish refuses every unknown section and key and every key spelled in
// another case than a known one, checks a [memory], [disk], [node] or [scope]
// section no reader decoded (every reader knows them), and returns all the file's refusals:
// nil, one [*storeconfig.Error], or all of them joined.
func (f *File) Finish() error {
	if !f.memory && f.Has(storeconfig.MemorySection) {
		f.Memory()
	}
	if !f.disk && f.Has(storeconfig.DiskSection) {
		f.Disk()
	}
	if !f.node && f.Has(storeconfig.NodeSection) {
		f.Node()
	}
	if !f.scope && f.Has(storeconfig.ScopeSection) {
		f.Scope()
	}
	if f.parsed {
		for _, k := range f.md.Keys() {
			f.unknown(k)
		}
	}
	return f.findings.Err()
}

// unknown refuses one key of the file that no section takes.
func (f *File) unknown(k toml.Key) {
	section := k[0]
	keys, ok := f.known[section]
	switch {
	case len(k) == 1 && ok:
		return
	case len(k) == 1:
		if t := f.md.Type(section); t == "Hash" || t == "ArrayHash" {
			f.Refuse(section, "", "unknown section (known: %s)%s", f.sectionList(), suggestion(section, f.sectionNames(), bracketed))
		} else {
			f.Refuse("", section, "unknown key")
		}
	case !ok || f.refused[section]:
		return // inside an unknown or refused section, refused with it
	case f.refused[section+"."+k[1]]:
		return // refused already, or a key inside it
	case !slices.Contains(keys, k[1]):
		f.Refuse(section, k[1], "unknown key (known: %s)%s", strings.Join(keys, ", "), suggestion(k[1], keys, func(k string) string { return k }))
	case len(k) > 2:
		f.Refuse(section, k[1], "wants a value, got a table")
	}
}

// UnknownSections lists the tables of the file that no reader of it
// knows (those [File.Finish] refuses as unknown sections), each once, in
// the order the file first names them.
func (f *File) UnknownSections() []string {
	var out []string
	if !f.parsed {
		return nil
	}
	for _, k := range f.md.Keys() {
		if _, ok := f.known[k[0]]; ok || slices.Contains(out, k[0]) {
			continue
		}
		if t := f.md.Type(k[0]); len(k) > 1 || t == "Hash" || t == "ArrayHash" {
			out = append(out, k[0]) // a table, not a key outside every section
		}
	}
	return out
}

// bracketed writes a section's name as a file does: "[blob]".
func bracketed(section string) string { return "[" + section + "]" }

// sectionList names the known sections, "[blob], [mooncake]".
func (f *File) sectionList() string {
	names := f.sectionNames()
	for i, s := range names {
		names[i] = bracketed(s)
	}
	return strings.Join(names, ", ")
}

// sectionNames lists the known sections, [blob] first, then the others
// in alphabetical order.
func (f *File) sectionNames() []string {
	names := make([]string, 0, len(f.known))
	for s := range f.known {
		names = append(names, s)
	}
	slices.Sort(names)
	slices.SortStableFunc(names, func(a, b string) int {
		// [blob] first, then the store sections.
		switch {
		case a == storeconfig.BlobSection && b != a:
			return -1
		case b == storeconfig.BlobSection && a != b:
			return 1
		}
		return 0
	})
	return names
}
