package mutate

import (
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"strings"
)

// source is one parsed file of the snapshot, to place mutants in it.
type source struct {
	fset  *token.FileSet
	file  *ast.File
	lines []string
}

// readSource parses file (relative to the module root).
func readSource(root, file string) (*source, error) {
	data, err := os.ReadFile(filepath.Join(root, file))
	if err != nil {
		return nil, err
	}
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, file, data, parser.SkipObjectResolution)
	if err != nil {
		return nil, err
	}
	return &source{fset: fset, file: f, lines: strings.Split(string(data), "\n")}, nil
}

// enclosing names the top-level declaration holding line: a function or
// method (by its name alone), or the first name of a var or const.
func (s *source) enclosing(line int) string {
	for _, d := range s.file.Decls {
		if s.fset.Position(d.Pos()).Line > line || s.fset.Position(d.End()).Line < line {
			continue
		}
		switch d := d.(type) {
		case *ast.FuncDecl:
			return d.Name.Name
		case *ast.GenDecl:
			for _, spec := range d.Specs {
				if v, ok := spec.(*ast.ValueSpec); ok && len(v.Names) > 0 &&
					s.fset.Position(v.Pos()).Line <= line && line <= s.fset.Position(v.End()).Line {
					return v.Names[0].Name
				}
			}
		}
	}
	return ""
}
