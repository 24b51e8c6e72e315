package mooncakedrv

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"strings"
)

// The markers between which writeMatrix puts the table in a file that
// has them (the module's README.md).
const (
	matrixBegin = "<!-- fault-matrix:begin (written by TestRealFaultMatrix; see above) -->"
	matrixEnd   = "<!-- fault-matrix:end -->"
)

// matrixTable is the matrix as a Markdown table, one row per fault.
func matrixTable(rows []matrixRow) string {
	var b strings.Builder
	b.WriteString("| fault | the store answered | verdicts | access | held at Shutdown | slots written after access ended | recovered |\n")
	b.WriteString("|---|---|---|---|---|---|---|\n")
	for _, r := range rows {
		fault := r.fault
		if r.failed {
			fault += " **(FAILED)**"
		}
		cells := []string{fault, r.answers, r.verdicts, r.access, r.held, r.written, r.recovered}
		for i, c := range cells {
			if c == "" {
				c = "—"
			}
			cells[i] = strings.ReplaceAll(c, "|", `\|`)
		}
		fmt.Fprintf(&b, "| %s |\n", strings.Join(cells, " | "))
	}
	return b.String()
}

// writeMatrix writes the table to path: between the markers when the
// file has them (the rest of it unchanged), as the whole file when there
// is none. A file without the markers is refused, never overwritten.
func writeMatrix(path string, rows []matrixRow) error {
	table := matrixTable(rows)
	old, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return os.WriteFile(path, []byte(table), 0o644)
	}
	if err != nil {
		return err
	}
	text := string(old)
	head, rest, ok := strings.Cut(text, matrixBegin)
	_, tail, ok2 := strings.Cut(rest, matrixEnd)
	if !ok || !ok2 {
		return fmt.Errorf("%s: no %q … %q markers to write the fault matrix between", path, matrixBegin, matrixEnd)
	}
	return os.WriteFile(path, []byte(head+matrixBegin+"\n"+table+matrixEnd+tail), 0o644)
}
