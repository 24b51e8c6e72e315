package modules

import (
	"errors"
	"fmt"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
)

// StandardLibrary is how a claim names the standard library.
const StandardLibrary = "the standard library"

// A Claim is a sentence of a package comment that says what the package
// imports, in the one form that is checked:
//
//	It imports only contract, keys and rowbatch.
//	It imports only contract and golang.org/x/sys/unix; ...
//	It imports only the standard library.
//
// The list after "imports only" ends at a full stop, a semicolon or a
// colon; its items are separated by commas and "and". An item is
// [StandardLibrary], a kvshare module by folder, or another module (or a
// package in it) by path. "Only" means nothing else comes with the
// package: the items are every module it pulls in, directly or not.
type Claim struct {
	// Text is the claim as written, from "imports only" to the end of
	// its list.
	Text string
	// Items are what it names.
	Items []string
}

var (
	claimPattern = regexp.MustCompile(`\bimports only (.*?)(?:[.;:](?:\s|$)|$)`)
	// offForm is a sentence that says "only" about imports in
	// another form ("imports the standard library only").
	offForm = regexp.MustCompile(`\bimports [^.;:,]*?\bonly\b`)
	listSep = regexp.MustCompile(`,? and |, `)
)

// Claims finds the claims of a package comment, and says what is wrong
// with each sentence that says what the package imports in another form
// ("imports the standard library only") and each claim with an item
// that is not one word (but [StandardLibrary]), and how to write it.
func Claims(doc string) ([]Claim, []error) {
	text := strings.Join(strings.Fields(doc), " ")
	var claims []Claim
	var errs []error
	for _, m := range claimPattern.FindAllStringSubmatch(text, -1) {
		c := Claim{Text: strings.TrimRight(m[0], " .;:")}
		var bad []string
		for _, item := range listSep.Split(m[1], -1) {
			if item != StandardLibrary && (item == "" || strings.ContainsAny(item, " ,")) {
				bad = append(bad, fmt.Sprintf("%q", item))
				continue
			}
			c.Items = append(c.Items, item)
		}
		if len(bad) > 0 {
			errs = append(errs, fmt.Errorf("%q: %s name no module: name modules by folder (contract) or by path (golang.org/x/sys), or write %q, and end the list with a full stop, a semicolon or a colon",
				c.Text, strings.Join(bad, ", "), StandardLibrary))
			continue
		}
		claims = append(claims, c)
	}
	for _, m := range offForm.FindAllString(text, -1) {
		if strings.HasPrefix(m, "imports only") {
			continue
		}
		errs = append(errs, fmt.Errorf("%q: write what a package imports as \"It imports only A, B and C.\"", m))
	}
	return claims, errs
}

// CheckClaims checks the claims in the doc.go of every package of every
// module against what the package pulls in, directly or not (graphs
// holds each module's [Graph] by folder): a claim must name every module
// the package pulls in and no other.
func (l List) CheckClaims(graphs map[string]Graph) error {
	var errs []error
	for _, m := range l.Modules {
		g, ok := graphs[m.Dir]
		if !ok {
			return fmt.Errorf("modules: no graph of %s", m.Dir)
		}
		for _, p := range g.Own() {
			if err := l.checkPackage(g, m, p); err != nil {
				errs = append(errs, err)
			}
		}
	}
	if len(errs) == 0 {
		return nil
	}
	return fmt.Errorf("modules: %w", errors.Join(errs...))
}

// checkPackage checks the claims of package p of module m.
func (l List) checkPackage(g Graph, m Module, p Package) error {
	file := filepath.Join(p.Dir, "doc.go")
	name := folderOf(p.ImportPath) + "doc.go"
	f, err := parser.ParseFile(token.NewFileSet(), file, nil, parser.PackageClauseOnly|parser.ParseComments)
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	claims, bad := Claims(f.Doc.Text())
	var errs []error
	for _, err := range bad {
		errs = append(errs, fmt.Errorf("%s: %w", name, err))
	}
	pulled, err := g.Reach(m.Path(), p.ImportPath)
	if err != nil {
		return err
	}
	want := g.Modules(pulled)
	for _, c := range claims {
		var got []string
		for _, item := range c.Items {
			switch mod, err := l.claimed(item, want); {
			case err != nil:
				errs = append(errs, fmt.Errorf("%s: %q: %w", name, c.Text, err))
			case mod != "":
				got = append(got, mod)
			}
		}
		slices.Sort(got)
		if !slices.Equal(slices.Compact(got), want) {
			errs = append(errs, fmt.Errorf("%s: %q, but package %s pulls in %s: write \"imports only %s\"",
				name, c.Text, p.ImportPath, english(want), english(want)))
		}
	}
	return errors.Join(errs...)
}

// claimed is the module an item of a claim names, given the modules
// pulled in: none for the standard library.
func (l List) claimed(item string, pulled []string) (string, error) {
	switch {
	case item == StandardLibrary:
		return "", nil
	case !strings.Contains(item, "."):
		if !slices.Contains(l.Dirs(), item) {
			return "", fmt.Errorf("%q is no folder of a module in build/modules", item)
		}
		return Module{Dir: item}.Path(), nil
	}
	for _, mod := range pulled {
		if item == mod || strings.HasPrefix(item, mod+"/") {
			return mod, nil
		}
	}
	return "", fmt.Errorf("the package pulls in no module that holds %s", item)
}

// folderOf is the folder of a kvshare package, relative to the repository
// root, with a slash after it ("" for the root).
func folderOf(importPath string) string {
	if importPath == Prefix {
		return ""
	}
	return strings.TrimPrefix(importPath, Prefix+"/") + "/"
}

// english lists modules as a claim names them: "contract, keys and
// rowbatch"; [StandardLibrary] for none.
func english(mods []string) string {
	if len(mods) == 0 {
		return StandardLibrary
	}
	names := ordered(mods)
	if len(names) == 1 {
		return names[0]
	}
	return strings.Join(names[:len(names)-1], ", ") + " and " + names[len(names)-1]
}
