package modules

import (
	"errors"
	"fmt"
	"slices"
	"strings"
)

// Matches reports whether entry, an element of [Module.Imports], covers
// package pkg: a sibling by folder ("contract") covers that module's
// packages, a path with a dot ("github.com/ebitengine/purego") the
// packages under it, and "=" before either ("=storeconfig") the one
// package it names and not its subpackages; "*" covers anything. It is
// the rule build/deps applies.
func Matches(entry, pkg string) bool {
	if entry == "*" {
		return true
	}
	exact := strings.HasPrefix(entry, "=")
	p := strings.TrimPrefix(entry, "=")
	if !strings.Contains(p, ".") {
		p = Prefix + "/" + p
	}
	return pkg == p || !exact && strings.HasPrefix(pkg, p+"/")
}

// Unused is the entries of m.Imports that cover none of pulled, the
// packages outside m that m's packages import, directly or not: entries
// the list can drop.
func (m Module) Unused(pulled []string) []string {
	var unused []string
	for _, entry := range m.Imports {
		if !slices.ContainsFunc(pulled, func(pkg string) bool { return Matches(entry, pkg) }) {
			unused = append(unused, entry)
		}
	}
	return unused
}

// CheckUsed checks that every entry of every module's Imports is needed:
// some package of the module imports, directly or not, a package it
// covers. graphs holds each module's [Graph] by folder; a module that
// may import anything ("*") is not checked. With build/deps, which
// checks that the entries cover every package imported, each module's
// Imports are exactly what it pulls in.
func (l List) CheckUsed(graphs map[string]Graph) error {
	var errs []error
	for _, m := range l.Modules {
		if slices.Contains(m.Imports, "*") {
			continue
		}
		g, ok := graphs[m.Dir]
		if !ok {
			return fmt.Errorf("modules: no graph of %s", m.Dir)
		}
		self, pulled, err := g.Pulled()
		if err != nil {
			return fmt.Errorf("modules: %s: %w", m.Dir, err)
		}
		if self != m.Path() {
			return fmt.Errorf("modules: the graph of %s is of module %s", m.Dir, self)
		}
		for _, entry := range m.Unused(pulled) {
			errs = append(errs, fmt.Errorf("build/modules lets %s import %s, which none of its packages imports, directly or not: drop it from the entry's Imports", m.Dir, entry))
		}
	}
	if len(errs) == 0 {
		return nil
	}
	return fmt.Errorf("modules: %w", errors.Join(errs...))
}
