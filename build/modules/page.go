package modules

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
)

// platform is the build the table is listed for, whatever the machine:
// kvshare's (it maps memory the Linux way), with cgo, which decides
// whether gpuroundtrip compiles its NVML discovery.
var platform = []string{"GOOS=linux", "GOARCH=amd64", "CGO_ENABLED=1"}

// Graphs lists the package graph of every module, each alone
// (GOWORK=off) and built with its Tags, and of every consumer, in a
// workspace of its own with every module, so that the kvshare modules
// it requires by version are the repository's; all for linux/amd64
// with cgo, whatever the machine. Both maps are by folder.
func (l List) Graphs(root string) (modules, consumers map[string]Graph, err error) {
	modules = map[string]Graph{}
	for _, m := range l.Modules {
		g, err := GoList(filepath.Join(root, filepath.FromSlash(m.Dir)), m.Tags, slices.Concat(platform, []string{"GOWORK=off"})...)
		if err != nil {
			return nil, nil, err
		}
		modules[m.Dir] = g
	}
	consumers = map[string]Graph{}
	if len(l.Consumers) == 0 {
		return modules, consumers, nil
	}
	work, err := os.MkdirTemp("", "kvshare-modules-")
	if err != nil {
		return nil, nil, fmt.Errorf("modules: %w", err)
	}
	defer os.RemoveAll(work)
	for _, c := range l.Consumers {
		dir, err := filepath.Abs(filepath.Join(root, filepath.FromSlash(c.Dir)))
		if err != nil {
			return nil, nil, fmt.Errorf("modules: %w", err)
		}
		file := filepath.Join(work, filepath.Base(dir)+".work")
		if err := l.writeWork(root, file, dir); err != nil {
			return nil, nil, err
		}
		g, err := GoList(dir, "", slices.Concat(platform, []string{"GOWORK=" + file})...)
		if err != nil {
			return nil, nil, err
		}
		consumers[c.Dir] = g
	}
	return modules, consumers, nil
}

// writeWork writes a go.work into file that uses folder dir and every
// module of the list, at the Go version of the go.work under root.
func (l List) writeWork(root, file, dir string) error {
	work, err := readWork(root)
	if err != nil {
		return err
	}
	if work.Go == nil {
		return errors.New("modules: go.work has no go directive")
	}
	var b strings.Builder
	fmt.Fprintf(&b, "go %s\n\nuse (\n\t%q\n", work.Go.Version, filepath.ToSlash(dir))
	for _, m := range l.Modules {
		abs, err := filepath.Abs(filepath.Join(root, filepath.FromSlash(m.Dir)))
		if err != nil {
			return fmt.Errorf("modules: %w", err)
		}
		fmt.Fprintf(&b, "\t%q\n", filepath.ToSlash(abs))
	}
	b.WriteString(")\n")
	if err := os.WriteFile(file, []byte(b.String()), 0o644); err != nil {
		return fmt.Errorf("modules: %w", err)
	}
	return nil
}

// Rows is the table's rows from the graphs [List.Graphs] lists: every
// module in the list's order, then every consumer.
func (l List) Rows(modules, consumers map[string]Graph) (mods, cons []Row, err error) {
	row := func(dir, name string, g Graph) (Row, error) {
		if g == nil {
			return Row{}, fmt.Errorf("modules: no graph of %s", dir)
		}
		deps, err := g.Deps()
		if err != nil {
			return Row{}, fmt.Errorf("modules: %s: %w", dir, err)
		}
		self, _ := g.Self()
		about := g[self].Doc
		if about == "" {
			return Row{}, fmt.Errorf("modules: %s: package %s has no package comment to describe the module with (write its doc.go)", dir, self)
		}
		return Row{Name: name, About: about, Deps: deps}, nil
	}
	for _, m := range l.Modules {
		r, err := row(m.Dir, ModuleName(m), modules[m.Dir])
		if err != nil {
			return nil, nil, err
		}
		mods = append(mods, r)
	}
	for _, c := range l.Consumers {
		r, err := row(c.Dir, "`"+c.Dir+"`", consumers[c.Dir])
		if err != nil {
			return nil, nil, err
		}
		cons = append(cons, r)
	}
	return mods, cons, nil
}

// Doc is [DocFile] as the code under root says it must read.
func (l List) Doc(root string) ([]byte, error) {
	modules, consumers, err := l.Graphs(root)
	if err != nil {
		return nil, err
	}
	mods, cons, err := l.Rows(modules, consumers)
	if err != nil {
		return nil, err
	}
	return Render(mods, cons)
}

// WriteDoc writes [DocFile] under root from the code, saying so on w.
func (l List) WriteDoc(root string, w io.Writer) error {
	page, err := l.Doc(root)
	if err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(root, filepath.FromSlash(DocFile)), page, 0o644); err != nil {
		return fmt.Errorf("modules: %w", err)
	}
	fmt.Fprintf(w, "modulesdoc: wrote %s\n", DocFile)
	return nil
}
