package doccheck

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

const sample = "# Title\n" + // 1
	"\n" + // 2
	"Intro with a [link](docs/x.md#part) and `[not a link](y.md)`\n" + // 3
	"spanning [two\n" + // 4
	"lines](z.md).\n" + // 5
	"\n" + // 6
	"<!-- toml: fragment -->\n" + // 7
	"```toml\n" + // 8
	"# not a heading\n" + // 9
	"[blob]\n" + // 10
	"```\n" + // 11
	"## Part two ##\n" + // 12
	"| Field | Default |\n" + // 13
	"|---|:---:|\n" + // 14
	"| `A` | 1 \\| 2 |\n" + // 15
	"| `B` | [3](#title) |\n" + // 16
	"after the table\n" + // 17
	"- item\n" + // 18
	"  ````go\n" + // 19
	"  ```\n" + // 20
	"  ````\n" + // 21
	"#hashtag is text\n" + // 22
	"~~~\n" + // 23
	"unclosed\n" // 24

func TestScanMarkdown(t *testing.T) {
	md := scanMarkdown(sample)
	require.Len(t, md.headings, 2)
	assert.Equal(t, heading{line: 1, level: 1, text: "Title"}, md.headings[0])
	assert.Equal(t, heading{line: 12, level: 2, text: "Part two"}, md.headings[1])

	require.Len(t, md.fences, 3)
	assert.Equal(t, fence{line: 8, lang: "toml", marker: "<!-- toml: fragment -->", text: "# not a heading\n[blob]\n"}, md.fences[0])
	assert.Equal(t, fence{line: 19, lang: "go", text: "  ```\n"}, md.fences[1], "a shorter run does not close a fence")
	assert.Equal(t, fence{line: 23, text: "unclosed\n\n"}, md.fences[2], "an unclosed fence runs to the end")

	require.Len(t, md.tables, 1)
	tab := md.tables[0]
	assert.Equal(t, 13, tab.line)
	assert.Equal(t, []string{"Field", "Default"}, tab.header)
	assert.Equal(t, []tableRow{{line: 15, cells: []string{"`A`", "1 | 2"}}, {line: 16, cells: []string{"`B`", "[3](#title)"}}}, tab.rows)

	var got []link
	for _, p := range md.paragraphs {
		got = append(got, links(p)...)
	}
	assert.Equal(t, []link{{line: 3, path: "docs/x.md", anchor: "part"}, {line: 4, path: "z.md"}, {line: 16, anchor: "title"}}, got)
	var starts []int
	for _, p := range md.paragraphs {
		starts = append(starts, p.lines[0])
	}
	assert.Equal(t, []int{3, 7, 13, 17, 22}, starts, "a table is a paragraph of its own; #hashtag is text")
}

func TestCells(t *testing.T) {
	for _, tc := range []struct {
		line string
		want []string
	}{
		{"| a | b |", []string{"a", "b"}},
		{"|a|b", []string{"a", "b"}},
		{`| a \| b | c \|`, []string{"a | b", "c |"}},
		{"| `x` |  |", []string{"`x`", ""}},
		{"|", []string{""}},
	} {
		assert.Equal(t, tc.want, cells(tc.line), tc.line)
	}
}

func TestCodeSpans(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"a `b` c", "a     c"},
		{"``a ` b`` c", "          c"},
		{"`open only", "`open only"},
		{"`a\nb` c", "  \n   c"},
		{"``` x `` y", "``` x `` y"},
	} {
		assert.Equal(t, tc.want, blankCode(tc.in), "%q", tc.in)
	}
	assert.Equal(t, "docs/design.md, x", plain("[`docs/design.md`](../docs/design.md), x "))
}

func TestSlug(t *testing.T) {
	for _, tc := range []struct{ heading, want string }{
		{"The kvshare command (tools)", "the-kvshare-command-tools"},
		{"9. Limits", "9-limits"},
		{"Measurement 7: Redis", "measurement-7-redis"},
		{"`kvshare node` and [a link](x.md)", "kvshare-node-and-a-link"},
		{"A — B", "a--b"},
		{"Décisions: mooncake_sdk", "décisions-mooncake_sdk"},
	} {
		assert.Equal(t, tc.want, slug(tc.heading), tc.heading)
	}
	got := anchors([]heading{{text: "Decisions"}, {text: "Decisions"}, {text: "decisions"}, {text: "Other"}})
	assert.Equal(t, map[string]bool{"decisions": true, "decisions-1": true, "decisions-2": true, "other": true}, got)
}

func TestLinksSkipOutside(t *testing.T) {
	p := paragraph{text: "[a](https://x.org/y) [b](mailto:me@x.org) [c](//cdn/x) ![d](img/e.svg \"title\") [e](<f g.md>)", lines: []int{7}}
	assert.Equal(t, []link{{line: 7, path: "img/e.svg"}}, links(p), "a target with a space is no link")
}

func TestRefs(t *testing.T) {
	for _, tc := range []struct {
		text string
		want []ref
	}{
		{`see docs/design.md, section "The node".`, []ref{{file: "docs/design.md", headings: []string{"The node"}}}},
		{`docs/design.md (section "Mooncake")`, []ref{{file: "docs/design.md", headings: []string{"Mooncake"}}}},
		{"`docs/design.md` (\"Mooncake\")", []ref{{file: "docs/design.md", headings: []string{"Mooncake"}}}},
		{`(docs/design.md, "Recording results")`, []ref{{file: "docs/design.md", headings: []string{"Recording results"}}}},
		{`the README's "Using your own pool"`, []ref{{file: "README", headings: []string{"Using your own pool"}}}},
		{`docs/design.md (sections "Keys" and "Scopes")`, []ref{{file: "docs/design.md", headings: []string{"Keys", "Scopes"}}}},
		{`design.md, "A", "B"`, []ref{{file: "design.md", headings: []string{"A", "B"}}}},
		{"[README](../README.md), section \"Security\"", []ref{{file: "../README.md", linked: true, headings: []string{"Security"}}}},
		{"[`x.md`](../x.md#top), section \"`kvshare` node\"", []ref{{file: "../x.md", linked: true, headings: []string{"kvshare node"}}}},
		{"docs/design.md, section \"The kvshare\ncommand (tools)\"", []ref{{file: "docs/design.md", headings: []string{"The kvshare command (tools)"}}}},
		{`a rule (section "Scopes")`, []ref{{headings: []string{"Scopes"}}}},
		{`README.md and x/y.md say more; see section "Z"`, []ref{{file: "x/y.md", headings: []string{"Z"}}}},
		{`README.md's section under heading (up to "## ")`, nil},
		{`a "quoted" word after nothing`, nil},
		{`f.md.Type(section) == "Hash"`, nil},
	} {
		got := refs(paragraph{text: tc.text, lines: []int{1, 2}})
		for i := range got {
			got[i].line = 0
		}
		assert.Equal(t, tc.want, got, tc.text)
	}
	got := refs(paragraph{text: "one\ntwo docs/a.md,\nsection \"B\"", lines: []int{10, 11, 12}})
	require.Len(t, got, 1)
	assert.Equal(t, 12, got[0].line, "a reference's line is its heading's")
}

func TestNames(t *testing.T) {
	assert.True(t, names("When calls meet", "When calls meet: who owns what"))
	assert.True(t, names("One driver kit", "One driver kit (drivekit)"))
	assert.True(t, names("The store bounded", "The store bounded, at copy speed"))
	assert.True(t, names("Mooncake", "Mooncake"))
	assert.False(t, names("Mooncake", "Mooncake Store"))
	assert.False(t, names("", "Mooncake"))
	assert.False(t, names("Mooncake (x)", "Mooncake"))
}

func TestGoParagraphs(t *testing.T) {
	src := "// Package p does\n" + // 1
		"// things.\n" + // 2
		"//\n" + // 3
		"//\tcode docs/a.md, section \"X\"\n" + // 4
		"//   - a list item\n" + // 5
		"package p\n" + // 6
		"\n" + // 7
		"var s = `\n" + // 8
		"// not a comment\n" + // 9
		"`\n" + // 10
		"/* block\n" + // 11
		" * comment */\n" + // 12
		"var x = 1 // trailing\n" // 13
	got := goParagraphs([]byte(src))
	require.Len(t, got, 4)
	assert.Equal(t, paragraph{text: "Package p does\nthings.", lines: []int{1, 2}}, got[0])
	assert.Equal(t, paragraph{text: "  - a list item", lines: []int{5}}, got[1])
	assert.Equal(t, paragraph{text: "block\ncomment ", lines: []int{11, 12}}, got[2])
	assert.Equal(t, paragraph{text: "trailing", lines: []int{13}}, got[3])
	assert.Empty(t, goParagraphs([]byte("package p\nvar s = \"unterminated\n")), "a file that does not scan gives what it scanned")
}

func TestDefaultCells(t *testing.T) {
	assert.Equal(t, 2, defaultColumn([]string{"Field", "Meaning", "Default, range"}))
	assert.Equal(t, 1, defaultColumn([]string{"x", "Zero value"}))
	assert.Equal(t, 3, defaultColumn([]string{"flag", "key", "meaning", "default"}))
	assert.Equal(t, -1, defaultColumn([]string{"Field", "Effect"}))

	for _, tc := range []struct {
		cell string
		want []string
	}{
		{"`Workers`", []string{"Workers"}},
		{"`MaxRowsPerCall`, `MaxBytesPerCall`", []string{"MaxRowsPerCall", "MaxBytesPerCall"}},
		{"`mode = \"0660\"`", []string{"mode"}},
		{"`reclaim_above` (bytes), `reclaim_wait`", []string{"reclaim_above", "reclaim_wait"}},
		{"Capacity", []string{"Capacity"}},
		{"—", nil},
		{"", nil},
	} {
		assert.Equal(t, tc.want, rowNames(tc.cell), tc.cell)
	}

	for _, tc := range []struct {
		cell string
		n    int
		want []string
	}{
		{"4, 1–1024", 1, []string{"4"}},
		{"0 (none), up to 65536", 1, []string{"0"}},
		{"empty: any library (its hash is logged)", 1, []string{"empty"}},
		{"`$KVSHARE_MOONCAKE_LIB`, else the loader's search path", 1, []string{"$KVSHARE_MOONCAKE_LIB"}},
		{"—, `0600`", 2, []string{"—", "0600"}},
		{"64 GiB, 64, 8,192", 3, []string{"64 GiB", "64", "8,192"}},
		{"none", 2, []string{"none", "none"}},
		{"30 s; 60 s with `RDMA`", 1, []string{"30 s"}},
		{"1, 2", 3, nil},
		{"x", 0, nil},
		{"`slog.Default()`.", 1, []string{"slog.Default()"}},
	} {
		assert.Equal(t, tc.want, stated(tc.cell, tc.n), "%q for %d", tc.cell, tc.n)
	}
}

func TestValues(t *testing.T) {
	assert.Equal(t, []string{"8192", "8,192", "node.X", "X"}, count(8192, "node.X").words)
	assert.Equal(t, []string{"0"}, count(0, "no cap of its own").words, "a description is no constant's name")
	assert.Equal(t, []string{"64 MiB", "64MiB", "67108864", "67,108,864"}, size(64<<20, "").words)
	assert.Equal(t, []string{"1536 KiB", "1536KiB", "1572864", "1,572,864"}, size(1536<<10, "").words)
	assert.Equal(t, []string{"0"}, size(0, "").words)
	assert.Equal(t, []string{"90 s", "90s", "90000 ms", "90000ms", "1m30s"}, duration(90e9, "").words)
	assert.Contains(t, duration(60e9, "").words, "1 m")
	assert.Contains(t, duration(60e9, "").words, "1 min")
	assert.Equal(t, []string{"0600", "DefaultMode"}, mode(0o600, "DefaultMode").words)
	assert.Equal(t, []string{"false", "off"}, flag(false, "").words)
	assert.Equal(t, []string{"true", "on"}, flag(true, "").words)
	assert.Equal(t, "-1,234", grouped(-1234))
	assert.Empty(t, described(true, "x").broken)
	assert.NotEmpty(t, described(false, "x").broken)
	assert.NotEmpty(t, required(false, "x").broken)
	assert.Equal(t, []string{"required"}, required(true, "x").words)
}

func TestSampleIsItsOwnFile(t *testing.T) {
	assert.Equal(t, 24, strings.Count(sample, "\n"), "the sample's line comments count its lines")
}
