package modules

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"slices"
	"strings"
)

// Package is one package of a [Graph], as go list describes it.
type Package struct {
	ImportPath string
	// Module is the path of the module that holds the package; empty for
	// the standard library.
	Module string
	// Standard is true for a package of the standard library.
	Standard bool
	// Own is true for a package of the folder the graph was listed in,
	// false for one listed only because another imports it.
	Own bool
	// Dir is the package's folder.
	Dir string
	// Doc is the first sentence of the package comment.
	Doc string
	// Imports are the import paths of the package's files, tests aside.
	Imports []string
}

// A Graph is every package that a build of one folder's packages
// (tests aside) compiles, by import path: the folder's own packages and
// all they import, directly or not, the standard library included.
type Graph map[string]Package

// GoList lists the graph of the packages under folder dir (./...) with
// `go list -deps`, built with tags (comma-separated), env added to the
// environment: GOWORK=off lists a module alone, as a team building it
// would.
func GoList(dir, tags string, env ...string) (Graph, error) {
	cmd := exec.Command("go", "list", "-deps", "-tags="+tags,
		"-json=ImportPath,Module,Standard,DepOnly,Dir,Doc,Imports", "./...")
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), env...)
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return nil, fmt.Errorf("modules: go list in %s: %w: %s", dir, err, strings.TrimSpace(stderr.String()))
	}
	g, err := decodeGraph(bytes.NewReader(out))
	if err != nil {
		return nil, fmt.Errorf("modules: go list in %s: %w", dir, err)
	}
	return g, nil
}

// decodeGraph reads go list's stream of JSON objects.
func decodeGraph(r io.Reader) (Graph, error) {
	g := Graph{}
	dec := json.NewDecoder(r)
	for {
		var p struct {
			ImportPath, Dir, Doc string
			Module               *struct{ Path string }
			Standard             bool
			DepOnly              bool
			Imports              []string
		}
		err := dec.Decode(&p)
		if errors.Is(err, io.EOF) {
			return g, nil
		}
		if err != nil {
			return nil, err
		}
		if p.ImportPath == "" {
			return nil, errors.New("a package without an import path")
		}
		pkg := Package{ImportPath: p.ImportPath, Standard: p.Standard, Own: !p.DepOnly, Dir: p.Dir, Doc: p.Doc, Imports: p.Imports}
		if p.Module != nil {
			pkg.Module = p.Module.Path
		}
		if !pkg.Standard && pkg.Module == "" {
			return nil, fmt.Errorf("package %s is in no module", p.ImportPath)
		}
		g[p.ImportPath] = pkg
	}
}

// Own is the folder's own packages, by import path.
func (g Graph) Own() []Package {
	var own []Package
	for _, p := range g {
		if p.Own {
			own = append(own, p)
		}
	}
	slices.SortFunc(own, func(a, b Package) int { return strings.Compare(a.ImportPath, b.ImportPath) })
	return own
}

// Self is the module of the folder's own packages: the module the graph
// was listed in.
func (g Graph) Self() (string, error) {
	self := ""
	for _, p := range g.Own() {
		if self != "" && p.Module != self {
			return "", fmt.Errorf("modules: the packages listed are in two modules, %s and %s", self, p.Module)
		}
		self = p.Module
	}
	if self == "" {
		return "", errors.New("modules: the folder has no package of its own")
	}
	return self, nil
}

// Reach is every package outside the standard library and outside
// module self that the packages from import, directly or not, sorted.
// An import the graph does not hold is an error (a graph from go list
// holds them all), except "C", cgo's.
func (g Graph) Reach(self string, from ...string) ([]string, error) {
	seen := map[string]bool{}
	var out []string
	todo := slices.Clone(from)
	for len(todo) > 0 {
		path := todo[len(todo)-1]
		todo = todo[:len(todo)-1]
		if seen[path] {
			continue
		}
		seen[path] = true
		p, ok := g[path]
		if !ok {
			if path == "C" {
				continue
			}
			return nil, fmt.Errorf("modules: the graph does not hold package %s", path)
		}
		if !p.Standard && p.Module != self {
			out = append(out, path)
		}
		todo = append(todo, p.Imports...)
	}
	slices.Sort(out)
	return out, nil
}

// Modules is the modules that hold pkgs, sorted, each once.
func (g Graph) Modules(pkgs []string) []string {
	var mods []string
	for _, p := range pkgs {
		mods = append(mods, g[p].Module)
	}
	slices.Sort(mods)
	return slices.Compact(mods)
}

// Deps is what a folder's own packages import, tests aside, as module
// paths, the folder's module and the standard library left out.
type Deps struct {
	// Direct is the modules its packages' files import.
	Direct []string
	// All is every module a build of its packages compiles, Direct
	// included: what a team that takes the folder gets.
	All []string
}

// Pulled is the module of the graph's own packages and every package
// outside it and the standard library that they import, directly or not.
func (g Graph) Pulled() (self string, pkgs []string, err error) {
	self, err = g.Self()
	if err != nil {
		return "", nil, err
	}
	var own []string
	for _, p := range g.Own() {
		own = append(own, p.ImportPath)
	}
	pkgs, err = g.Reach(self, own...)
	return self, pkgs, err
}

// Deps is what the graph's own packages import, directly and all told.
func (g Graph) Deps() (Deps, error) {
	self, all, err := g.Pulled()
	if err != nil {
		return Deps{}, err
	}
	var direct []string
	for _, p := range g.Own() {
		for _, imp := range p.Imports {
			if q, ok := g[imp]; ok && !q.Standard && q.Module != self {
				direct = append(direct, imp)
			}
		}
	}
	return Deps{Direct: g.Modules(direct), All: g.Modules(all)}, nil
}
