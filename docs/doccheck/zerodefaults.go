package doccheck

import (
	"errors"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// zeroDefaults reads, from the Go source of the package in dir, the
// defaults the method fn fills in: every `if o.F == 0 { o.F = EXPR }`
// of its body, EXPR a constant expression (integers, + - * / << >>,
// time's units, the package's own constants). It gives field name →
// value (a duration in nanoseconds), and an error naming each default
// it could not evaluate. It is for a package whose defaults
// are not exported: it reads what the code does, not what it says.
func zeroDefaults(dir, fn string) (map[string]int64, error) {
	fset := token.NewFileSet()
	names, err := filepath.Glob(filepath.Join(dir, "*.go"))
	if err != nil {
		return nil, err
	}
	consts := map[string]ast.Expr{}
	var body *ast.BlockStmt
	for _, name := range names {
		if strings.HasSuffix(name, "_test.go") {
			continue
		}
		src, err := os.ReadFile(name)
		if err != nil {
			return nil, err
		}
		f, err := parser.ParseFile(fset, name, src, parser.SkipObjectResolution)
		if err != nil {
			return nil, err
		}
		for _, d := range f.Decls {
			switch d := d.(type) {
			case *ast.GenDecl:
				if d.Tok != token.CONST {
					continue
				}
				for _, s := range d.Specs {
					vs := s.(*ast.ValueSpec)
					for i, n := range vs.Names {
						if i < len(vs.Values) {
							consts[n.Name] = vs.Values[i]
						}
					}
				}
			case *ast.FuncDecl:
				if d.Name.Name == fn && d.Body != nil {
					body = d.Body
				}
			}
		}
	}
	if body == nil {
		return nil, fmt.Errorf("doccheck: no function %s in %s", fn, dir)
	}
	out := map[string]int64{}
	var errs []error
	ast.Inspect(body, func(n ast.Node) bool {
		s, ok := n.(*ast.IfStmt)
		if !ok || s.Init != nil || s.Else != nil || len(s.Body.List) != 1 {
			return true
		}
		field := zeroTest(s.Cond)
		as, ok := s.Body.List[0].(*ast.AssignStmt)
		if field == "" || !ok || as.Tok != token.ASSIGN || len(as.Lhs) != 1 || len(as.Rhs) != 1 || selected(as.Lhs[0]) != field {
			return true
		}
		v, err := constant(as.Rhs[0], consts, 0)
		if err != nil {
			errs = append(errs, fmt.Errorf("doccheck: %s's default for %s: %w", fn, field, err))
		}
		out[field] = v
		return true
	})
	return out, errors.Join(errs...)
}

// zeroTest is F of a condition x.F == 0, or "".
func zeroTest(e ast.Expr) string {
	b, ok := e.(*ast.BinaryExpr)
	if !ok || b.Op != token.EQL {
		return ""
	}
	if lit, ok := b.Y.(*ast.BasicLit); !ok || lit.Value != "0" {
		return ""
	}
	return selected(b.X)
}

// selected is F of x.F, or "".
func selected(e ast.Expr) string {
	if s, ok := e.(*ast.SelectorExpr); ok {
		if _, ok := s.X.(*ast.Ident); ok {
			return s.Sel.Name
		}
	}
	return ""
}

var timeUnits = map[string]time.Duration{"Nanosecond": time.Nanosecond, "Microsecond": time.Microsecond,
	"Millisecond": time.Millisecond, "Second": time.Second, "Minute": time.Minute, "Hour": time.Hour}

// constant evaluates an integer constant expression.
func constant(e ast.Expr, consts map[string]ast.Expr, depth int) (int64, error) {
	if depth > 32 {
		return 0, fmt.Errorf("constants nest too deep")
	}
	switch e := e.(type) {
	case *ast.BasicLit:
		if e.Kind != token.INT {
			return 0, fmt.Errorf("%s is not an integer", e.Value)
		}
		return strconv.ParseInt(e.Value, 0, 64)
	case *ast.ParenExpr:
		return constant(e.X, consts, depth+1)
	case *ast.Ident:
		if c, ok := consts[e.Name]; ok {
			return constant(c, consts, depth+1)
		}
		return 0, fmt.Errorf("%s is not a constant of the package", e.Name)
	case *ast.SelectorExpr:
		if x, ok := e.X.(*ast.Ident); ok && x.Name == "time" {
			if u, ok := timeUnits[e.Sel.Name]; ok {
				return int64(u), nil
			}
		}
		return 0, fmt.Errorf("a selector other than time's units")
	case *ast.BinaryExpr:
		x, err := constant(e.X, consts, depth+1)
		if err != nil {
			return 0, err
		}
		y, err := constant(e.Y, consts, depth+1)
		if err != nil {
			return 0, err
		}
		switch e.Op {
		case token.ADD:
			return x + y, nil
		case token.SUB:
			return x - y, nil
		case token.MUL:
			return x * y, nil
		case token.QUO:
			if y == 0 {
				return 0, fmt.Errorf("division by zero")
			}
			return x / y, nil
		case token.SHL:
			return x << y, nil
		case token.SHR:
			return x >> y, nil
		}
		return 0, fmt.Errorf("operator %s", e.Op)
	}
	return 0, fmt.Errorf("an expression of type %T", e)
}
