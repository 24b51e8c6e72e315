package modules

import (
	"bytes"
	_ "embed"
	"fmt"
	"slices"
	"strings"
	"text/template"
)

// DocFile is the table of modules, relative to the repository root:
// [List.Doc] writes it and a test of this package compares it with the
// code.
const DocFile = "docs/modules.md"

// RegenerateCommand writes [DocFile] again.
const RegenerateCommand = "go run mage.go modulesdoc"

// Row is one line of the table: a module or a consumer and what its
// packages import.
type Row struct {
	// Name is how the table names it: a module's folder, with its build
	// tags after it.
	Name string
	// About is the first sentence of its package comment.
	About string
	Deps
}

//go:embed modules.md.tmpl
var layout string

var pageTemplate = template.Must(template.New(DocFile).Funcs(template.FuncMap{"names": names, "cell": cell}).Parse(layout))

// Render writes the page of [DocFile]: the table of modules and the
// table of consumers.
func Render(modules, consumers []Row) ([]byte, error) {
	var b bytes.Buffer
	err := pageTemplate.Execute(&b, struct {
		Command, Prefix    string
		Modules, Consumers []Row
	}{RegenerateCommand, Prefix, modules, consumers})
	if err != nil {
		return nil, fmt.Errorf("modules: %w", err)
	}
	return b.Bytes(), nil
}

// names lists module paths for a cell, as [ordered] names them.
func names(mods []string) string {
	if len(mods) == 0 {
		return "none"
	}
	out := ordered(mods)
	for i, n := range out {
		if n != "root" {
			out[i] = "`" + n + "`"
		}
	}
	return cell(strings.Join(out, ", "))
}

// ordered names modules the way the table and the claims do: kvshare
// modules by folder ("root" for the root), in order, then the others by
// path, in order.
func ordered(mods []string) []string {
	var ours, theirs []string
	for _, m := range mods {
		switch {
		case m == Prefix:
			ours = append(ours, "root")
		case Sibling(m):
			ours = append(ours, strings.TrimPrefix(m, Prefix+"/"))
		default:
			theirs = append(theirs, m)
		}
	}
	slices.Sort(ours)
	slices.Sort(theirs)
	return append(ours, theirs...)
}

// cell makes text safe inside a table cell.
func cell(text string) string {
	text = strings.Join(strings.Fields(text), " ")
	return strings.ReplaceAll(text, "|", `\|`)
}

// ModuleName is how the table names module m: its folder ("root" for
// the root's), and the build tags its checks use.
func ModuleName(m Module) string {
	name := "`" + m.Dir + "`"
	if m.Dir == "." {
		name = "root"
	}
	if m.Tags != "" {
		name += " (tags " + "`" + m.Tags + "`" + ")"
	}
	return name
}
