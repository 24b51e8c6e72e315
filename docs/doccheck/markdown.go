package doccheck

import (
	"regexp"
	"strings"
)

// A markdown is one Markdown file, scanned: its fenced blocks, headings,
// tables and prose paragraphs, each with the line it starts on
// (1-based).
type markdown struct {
	fences     []fence
	headings   []heading
	tables     []table
	paragraphs []paragraph
}

// A fence is one fenced code block.
type fence struct {
	line   int    // the opening fence's line
	lang   string // the info string's first word ("toml", "go", "")
	marker string // an HTML comment alone on the line before, "" if none
	text   string // the lines between the fences, each ending in "\n"
}

// A heading is one ATX heading (# to ######).
type heading struct {
	line  int
	level int
	text  string // as written, trimmed, closing #s removed
}

// A table is one pipe table: its header row and its body rows.
type table struct {
	line   int // the header row's
	header []string
	rows   []tableRow
}

// A tableRow is one body row of a table.
type tableRow struct {
	line  int
	cells []string
}

// A paragraph is a run of prose lines outside fenced blocks, joined by
// "\n"; lines[i] is the file's line number of its i-th line.
type paragraph struct {
	text  string
	lines []int
}

// lineAt is the file's line number of byte offset off of the paragraph.
func (p paragraph) lineAt(off int) int {
	return p.lines[strings.Count(p.text[:off], "\n")]
}

var (
	fenceOpen  = regexp.MustCompile("^\\s*(`{3,}|~{3,})\\s*([^`\\s]*)")
	atxHeading = regexp.MustCompile(`^ {0,3}(#{1,6})(?:\s+(.*?))?\s*$`)
	delimRow   = regexp.MustCompile(`^\s*\|?\s*:?-+:?\s*(\|\s*:?-+:?\s*)*\|?\s*$`)
	atxClose   = regexp.MustCompile(`\s#+$`)
	htmlMarker = regexp.MustCompile(`^\s*<!--.*-->\s*$`)
)

// scanMarkdown splits src into its parts. Lines inside a fenced block
// belong to the block alone; a table's lines are also prose (a cell may
// hold a link).
func scanMarkdown(src string) markdown {
	var md markdown
	lines := strings.Split(strings.ReplaceAll(src, "\r\n", "\n"), "\n")
	var para paragraph
	flush := func() {
		if len(para.lines) > 0 {
			md.paragraphs = append(md.paragraphs, para)
		}
		para = paragraph{}
	}
	for i := 0; i < len(lines); i++ {
		line := lines[i]
		if m := fenceOpen.FindStringSubmatch(line); m != nil {
			flush()
			f := fence{line: i + 1, lang: strings.ToLower(m[2]), marker: markerBefore(lines, i)}
			close := m[1]
			var body strings.Builder
			for i++; i < len(lines); i++ {
				t := strings.TrimSpace(lines[i])
				if strings.HasPrefix(t, close) && strings.Trim(t, close[:1]) == "" {
					break
				}
				body.WriteString(lines[i] + "\n")
			}
			f.text = body.String()
			md.fences = append(md.fences, f)
			continue
		}
		if strings.TrimSpace(line) == "" {
			flush()
			continue
		}
		if m := atxHeading.FindStringSubmatch(line); m != nil {
			flush()
			text := atxClose.ReplaceAllString(" "+m[2], "") // a closing run of #s follows a space
			md.headings = append(md.headings, heading{line: i + 1, level: len(m[1]), text: strings.TrimSpace(text)})
			continue
		}
		if isRow(line) && i+1 < len(lines) && delimRow.MatchString(lines[i+1]) && strings.Contains(lines[i+1], "-") {
			t := table{line: i + 1, header: cells(line)}
			para.text, para.lines = joinLine(para, line, i+1)
			for i += 2; i < len(lines) && isRow(lines[i]); i++ {
				t.rows = append(t.rows, tableRow{line: i + 1, cells: cells(lines[i])})
				para.text, para.lines = joinLine(para, lines[i], i+1)
			}
			i--
			md.tables = append(md.tables, t)
			flush()
			continue
		}
		para.text, para.lines = joinLine(para, line, i+1)
	}
	flush()
	return md
}

// joinLine adds a line to a paragraph.
func joinLine(p paragraph, line string, n int) (string, []int) {
	if len(p.lines) > 0 {
		p.text += "\n"
	}
	return p.text + line, append(p.lines, n)
}

// markerBefore is the HTML comment alone on the line before line i, if
// any.
func markerBefore(lines []string, i int) string {
	if i > 0 && htmlMarker.MatchString(lines[i-1]) {
		return strings.TrimSpace(lines[i-1])
	}
	return ""
}

// isRow reports whether line is a table row: it starts with a pipe.
func isRow(line string) bool { return strings.HasPrefix(strings.TrimSpace(line), "|") }

// cells splits a table row at its unescaped pipes, trimming each cell
// and dropping the empty ends the outer pipes leave.
func cells(line string) []string {
	line = strings.TrimSpace(line)
	line = strings.TrimPrefix(line, "|")
	if strings.HasSuffix(line, "|") && !strings.HasSuffix(line, `\|`) {
		line = line[:len(line)-1]
	}
	var out []string
	var cell strings.Builder
	for i := 0; i < len(line); i++ {
		switch {
		case line[i] == '\\' && i+1 < len(line) && line[i+1] == '|':
			cell.WriteByte('|')
			i++
		case line[i] == '|':
			out = append(out, strings.TrimSpace(cell.String()))
			cell.Reset()
		default:
			cell.WriteByte(line[i])
		}
	}
	return append(out, strings.TrimSpace(cell.String()))
}

// codeSpans calls f for every code span of s: the offsets of its
// backtick runs' outer ends. An unmatched run is text.
func codeSpans(s string, f func(start, end int)) {
	for i := 0; i < len(s); {
		if s[i] != '`' {
			i++
			continue
		}
		n := 0
		for i+n < len(s) && s[i+n] == '`' {
			n++
		}
		run := s[i : i+n]
		end := -1
		for j := i + n; j < len(s); {
			k := strings.Index(s[j:], run)
			if k < 0 {
				break
			}
			k += j
			m := 0
			for k+m < len(s) && s[k+m] == '`' {
				m++
			}
			if m == n {
				end = k + n
				break
			}
			j = k + m
		}
		if end < 0 {
			i += n
			continue
		}
		f(i, end)
		i = end
	}
}

// blankCode replaces every code span of s, backticks included, with
// spaces (newlines kept), so that offsets stay those of s.
func blankCode(s string) string {
	b := []byte(s)
	codeSpans(s, func(start, end int) {
		for i := start; i < end; i++ {
			if b[i] != '\n' {
				b[i] = ' '
			}
		}
	})
	return string(b)
}

// plain is inline Markdown as read: code spans' backticks and links'
// brackets and targets dropped, spaces trimmed.
func plain(s string) string {
	s = inlineLink.ReplaceAllString(s, "$1")
	return strings.TrimSpace(strings.ReplaceAll(s, "`", ""))
}
