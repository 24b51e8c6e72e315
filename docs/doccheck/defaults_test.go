package doccheck

import (
	"fmt"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
)

// A defaultTable ties a table of the documentation that has a default
// column to the code it documents.
type defaultTable struct {
	file string // slash path from the repository root
	// first is the header, read plain, of the first column that names
	// a row's fields: with the file, it says which table this is.
	first string
	// names are the columns that name a row's field (the first when
	// nil); several are joined with a space ("[blob] key_prefix").
	names []int
	// code is what the code gives each field left zero, and every
	// field the table must have a row for.
	code func(t *testing.T) (want map[string]value, fields []string)
	// skip, when set, says why the table is not checked.
	skip string
}

// TestDefaultTablesStateTheCode checks every table of the
// documentation with a default column (a header starting "Default", or
// "Zero value") against the code: each row's default states what the
// code gives the field left zero, and each field has a row.
func TestDefaultTablesStateTheCode(t *testing.T) {
	r := openRepo(t)
	tied := map[int]int{}
	for _, name := range r.files(t, ".md") {
		for _, tab := range r.doc(t, name).tables {
			if defaultColumn(tab.header) < 0 {
				continue
			}
			i := slices.IndexFunc(defaultTables, func(d defaultTable) bool { return d.file == name && d.first == d.nameHeader(tab) })
			if i < 0 {
				t.Errorf("%s:%d: a table with a default column that no check ties to the code: add it to defaultTables (docs/doccheck)", name, tab.line)
				continue
			}
			tied[i]++
			if d := defaultTables[i]; d.skip == "" {
				want, fields := d.code(t)
				for _, problem := range checkDefaults(name, tab, d.names, want, fields) {
					t.Error(problem)
				}
			}
		}
	}
	for i, d := range defaultTables {
		switch {
		case tied[i] == 0:
			t.Errorf("%s: no table with a default column whose fields are named under %q: update defaultTables (docs/doccheck)", d.file, d.first)
		case tied[i] > 1 && d.skip == "":
			t.Errorf("%s: %d tables with a default column name their fields under %q: head one otherwise", d.file, tied[i], d.first)
		}
	}
}

// nameHeader is the header, read plain, of the table's first name
// column ("" when the table has no such column).
func (d defaultTable) nameHeader(tab table) string {
	c := 0
	if d.names != nil {
		c = d.names[0]
	}
	if c >= len(tab.header) {
		return ""
	}
	return plain(tab.header[c])
}

// checkDefaults checks one table: every row's default cell states, for
// each field the row names, one of the ways of writing want[field];
// every field of fields has a row. Each problem reads "file:line: what".
func checkDefaults(file string, tab table, nameCols []int, want map[string]value, fields []string) []string {
	if nameCols == nil {
		nameCols = []int{0}
	}
	col := defaultColumn(tab.header)
	var problems []string
	seen := map[string]bool{}
	for _, row := range tab.rows {
		if len(row.cells) <= col || len(row.cells) <= slices.Max(nameCols) {
			problems = append(problems, fmt.Sprintf("%s:%d: the row has %d cells, the header %d", file, row.line, len(row.cells), len(tab.header)))
			continue
		}
		fieldNames := rowFields(row, nameCols)
		if len(fieldNames) == 0 {
			continue // a row for no field ("—")
		}
		says := stated(row.cells[col], len(fieldNames))
		if says == nil {
			problems = append(problems, fmt.Sprintf("%s:%d: %q states %d values for %d fields (%s): give one for all, or one each, separated by \", \"",
				file, row.line, row.cells[col], len(strings.Split(row.cells[col], ", ")), len(fieldNames), strings.Join(fieldNames, ", ")))
			continue
		}
		for i, field := range fieldNames {
			seen[field] = true
			v, ok := want[field]
			switch {
			case !ok:
				problems = append(problems, fmt.Sprintf("%s:%d: %s: the code has no such field (known: %s)", file, row.line, field, strings.Join(sortedKeys(want), ", ")))
			case v.broken != "":
				problems = append(problems, fmt.Sprintf("%s:%d: %s: the table says %q, but %s (%s)", file, row.line, field, says[i], v.broken, v.from))
			case v.words != nil && !slices.Contains(v.words, says[i]):
				problems = append(problems, fmt.Sprintf("%s:%d: %s: the table says %q; the code gives %s (%s): write %q",
					file, row.line, field, says[i], v.words[0], v.from, v.words[0]))
			}
		}
	}
	for _, f := range fields {
		if !seen[f] {
			problems = append(problems, fmt.Sprintf("%s:%d: %s has no row in the table", file, tab.line, f))
		}
	}
	return problems
}

// rowFields is the fields a row names in its name columns: one name
// from each column but the last, prefixed to each name of the last.
func rowFields(row tableRow, nameCols []int) []string {
	var prefix []string
	for _, c := range nameCols[:len(nameCols)-1] {
		prefix = append(prefix, rowNames(row.cells[c])...)
	}
	var out []string
	for _, n := range rowNames(row.cells[nameCols[len(nameCols)-1]]) {
		out = append(out, strings.Join(append(slices.Clone(prefix), n), " "))
	}
	return out
}

// exported lists the exported fields of a struct's type.
func exported(v any) []string {
	var out []string
	for f := range reflect.TypeOf(v).Fields() {
		if f.IsExported() {
			out = append(out, f.Name)
		}
	}
	return out
}

func sortedKeys(m map[string]value) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

func TestCheckDefaultsCases(t *testing.T) {
	tab := func(rows ...string) table {
		md := scanMarkdown("| Field | Meaning | Default |\n|---|---|---|\n" + strings.Join(rows, "\n") + "\n")
		return md.tables[0]
	}
	want := map[string]value{
		"Workers":  count(4, "x.DefaultWorkers"),
		"Bytes":    size(128<<20, "x.DefaultBytes"),
		"Wait":     duration(90e9, "x.DefaultWait"),
		"Prefix":   text("kvshare", "x.DefaultPrefix"),
		"Logger":   described(true, "nil: slog.Default()"),
		"Lost":     described(false, "x.Lost"),
		"Master":   required(true, "x.Parse"),
		"Optional": required(false, "x.Parse"),
	}
	for _, tc := range []struct {
		name string
		rows []string
		want []string // each problem's start; none: the table agrees
	}{
		{"agrees", []string{
			"| `Workers` | workers | 4, 1–1024 |", "| `Bytes` | b | 128 MiB |", "| `Wait` | w | 90 s |",
			"| `Prefix` | p | `kvshare` |", "| `Logger` | l | `slog.Default()` |", "| `Master` | m | required |",
		}, nil},
		{"one value for several fields, and one each", []string{"| `Workers`, `Bytes` | x | 4, 134217728 (both) |", "| `Wait` | w | 1m30s |"}, nil},
		{"a wrong number", []string{"| `Workers` | w | 2 |"}, []string{`doc.md:3: Workers: the table says "2"; the code gives 4 (x.DefaultWorkers): write "4"`}},
		{"the constant's name", []string{"| `Bytes` | b | `DefaultBytes` (128 MiB) |"}, nil},
		{"empty where the code sets a default", []string{"| `Prefix` | p | empty |"}, []string{`doc.md:3: Prefix: the table says "empty"; the code gives kvshare`}},
		{"a field the code lacks", []string{"| `Worker` | w | 4 |"}, []string{"doc.md:3: Worker: the code has no such field"}},
		{"a description the code broke", []string{"| `Lost` | l | none |"}, []string{`doc.md:3: Lost: the table says "none", but the code no longer keeps`}},
		{"required, but not", []string{"| `Optional` | o | required |"}, []string{`doc.md:3: Optional: the table says "required", but the code takes a config without it`}},
		{"three values for two fields", []string{"| `Workers`, `Bytes` | x | 4, 5, 6 |"}, nil},
		{"two values for three fields", []string{"| `Workers`, `Bytes`, `Wait` | x | 4, 5 |"}, []string{`doc.md:3: "4, 5" states 2 values for 3 fields`}},
		{"a row for no field", []string{"| — | x | 4 |"}, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := checkDefaults("doc.md", tab(tc.rows...), nil, want, nil)
			if tc.name == "three values for two fields" {
				assert.Len(t, got, 1, "the second value, 5, is not 128 MiB: %q", got)
				return
			}
			assert.Len(t, got, len(tc.want), "%q", got)
			for i := range min(len(got), len(tc.want)) {
				assert.True(t, strings.HasPrefix(got[i], tc.want[i]), "got %q, want it to start %q", got[i], tc.want[i])
			}
		})
	}
	got := checkDefaults("doc.md", tab("| `Workers` | w | 4 |"), nil, want, []string{"Workers", "Wait"})
	assert.Equal(t, []string{"doc.md:1: Wait has no row in the table"}, got)
}
