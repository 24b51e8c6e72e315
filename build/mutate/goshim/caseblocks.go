package main

import (
	"bufio"
	"errors"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"strings"
)

// block is one line of a coverage profile.
type block struct {
	startLine, startCol, endLine, endCol int
	count                                int64
}

func (b block) holds(p token.Position) bool {
	after := p.Line > b.startLine || p.Line == b.startLine && p.Column >= b.startCol
	before := p.Line < b.endLine || p.Line == b.endLine && p.Column <= b.endCol
	return after && before
}

// addCaseBlocks appends to the profile a block over the expressions of
// each case clause that was evaluated: one at or before a clause whose
// body ran, every one when the default ran or when the switch ran more
// often than its clauses did (an execution that matched none).
func addCaseBlocks(profile, moduleDir string) error {
	data, err := os.ReadFile(profile)
	if err != nil {
		return err
	}
	module, err := modulePath(moduleDir)
	if err != nil {
		return err
	}
	blocks := map[string][]block{}
	var files []string
	for _, line := range strings.Split(string(data), "\n") {
		if line == "" || strings.HasPrefix(line, "mode:") {
			continue
		}
		var b block
		var stmts int
		name, rest, ok := strings.Cut(line, ":")
		if !ok {
			return fmt.Errorf("%s: bad line %q", profile, line)
		}
		if _, err := fmt.Sscanf(rest, "%d.%d,%d.%d %d %d", &b.startLine, &b.startCol, &b.endLine, &b.endCol, &stmts, &b.count); err != nil {
			return fmt.Errorf("%s: bad line %q: %w", profile, line, err)
		}
		if _, seen := blocks[name]; !seen {
			files = append(files, name)
		}
		blocks[name] = append(blocks[name], b)
	}
	var added strings.Builder
	for _, name := range files {
		rel, ok := strings.CutPrefix(name, module+"/")
		if !ok {
			continue
		}
		fset := token.NewFileSet()
		f, err := parser.ParseFile(fset, filepath.Join(moduleDir, rel), nil, parser.SkipObjectResolution)
		if err != nil {
			return err
		}
		count := func(p token.Position) (n int64, found bool) {
			for _, b := range blocks[name] {
				if b.holds(p) {
					n, found = max(n, b.count), true
				}
			}
			return n, found
		}
		ast.Inspect(f, func(n ast.Node) bool {
			sw, ok := n.(*ast.SwitchStmt)
			if !ok {
				return true
			}
			reached, _ := count(fset.Position(sw.Switch))
			if reached == 0 {
				return true
			}
			var clauses []*ast.CaseClause
			var ran []int64
			var sum, dflt int64
			for _, s := range sw.Body.List {
				c := s.(*ast.CaseClause)
				p := fset.Position(c.Colon)
				p.Column++
				n, _ := count(p)
				sum += n
				if c.List == nil {
					dflt = n
					continue
				}
				clauses = append(clauses, c)
				ran = append(ran, n)
			}
			all := dflt > 0 || reached > sum
			for i, c := range clauses {
				evaluated := all
				for _, n := range ran[i:] {
					evaluated = evaluated || n > 0
				}
				if evaluated {
					from, to := fset.Position(c.Case), fset.Position(c.Colon)
					fmt.Fprintf(&added, "%s:%d.%d,%d.%d 0 1\n", name, from.Line, from.Column, to.Line, to.Column)
				}
			}
			return true
		})
	}
	if added.Len() == 0 {
		return nil
	}
	out, err := os.OpenFile(profile, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		return err
	}
	if _, err := out.WriteString(added.String()); err != nil {
		out.Close()
		return err
	}
	return out.Close()
}

// modulePath reads the module path from the go.mod in moduleDir (the
// coverage run is started in the module's root).
func modulePath(moduleDir string) (string, error) {
	f, err := os.Open(filepath.Join(moduleDir, "go.mod"))
	if err != nil {
		return "", err
	}
	defer f.Close()
	s := bufio.NewScanner(f)
	for s.Scan() {
		if m, ok := strings.CutPrefix(strings.TrimSpace(s.Text()), "module "); ok {
			return strings.Trim(strings.TrimSpace(m), "\""), nil
		}
	}
	return "", errors.New("go.mod names no module")
}
