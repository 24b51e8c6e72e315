package mutate

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/kvshare/kvshare/build/modules"
)

func write(t *testing.T, root, name, body string) {
	t.Helper()
	p := filepath.Join(root, filepath.FromSlash(name))
	require.NoError(t, os.MkdirAll(filepath.Dir(p), 0o755))
	require.NoError(t, os.WriteFile(p, []byte(body), 0o644))
}

func TestFromEnv(t *testing.T) {
	root := t.TempDir()
	write(t, root, "keys/go.mod", "module k\n")
	write(t, root, "binding/go.mod", "module b\n")
	env := func(m map[string]string) func(string) string { return func(k string) string { return m[k] } }

	s, err := FromEnv(root, env(nil))
	require.NoError(t, err)
	assert.Equal(t, DefaultModules, s.Modules)
	assert.Equal(t, 10, s.Coefficient)
	assert.Equal(t, 1, s.Workers)
	assert.Equal(t, 95.0, s.Goal)
	assert.Nil(t, s.Files)

	s, err = FromEnv(root, env(map[string]string{EnvModules: " keys, binding ,", EnvFiles: `^verdict\.go$`,
		EnvCoefficient: "5", EnvWorkers: "2", EnvGoal: "90.5"}))
	require.NoError(t, err)
	assert.Equal(t, []string{"keys", "binding"}, s.Modules)
	assert.True(t, s.Files.MatchString("verdict.go"))
	assert.Equal(t, 5, s.Coefficient)
	assert.Equal(t, 2, s.Workers)
	assert.Equal(t, 90.5, s.Goal)

	for name, tc := range map[string]struct{ key, value, want string }{
		"not a module":    {EnvModules, "nope", `"nope" is not a module folder`},
		"the root":        {EnvModules, ".", `"." is not a module folder`},
		"a bad regexp":    {EnvFiles, "(", EnvFiles},
		"zero workers":    {EnvWorkers, "0", "want a positive integer"},
		"a word":          {EnvCoefficient, "ten", "want a positive integer"},
		"a goal over 100": {EnvGoal, "101", "want a percentage"},
	} {
		_, err := FromEnv(root, env(map[string]string{tc.key: tc.value}))
		assert.ErrorContains(t, err, tc.want, name)
	}
}

const fixtureSource = `package p

func bound(rows, slots int) int {
	if rows > slots {
		return slots
	}
	return rows
}

var limit = 1 << 10

func verdict(code int) int {
	if code >= 0 {
		return 1
	}
	return 0
}
`

func TestEntriesMatchTheirMutantsOnly(t *testing.T) {
	root := t.TempDir()
	write(t, root, "p/p.go", fixtureSource)
	write(t, root, "p/mutants.txt", "# a comment\n\n- `p.go` in `bound`: `rows > slots` (CONDITIONALS_BOUNDARY, CONDITIONALS_NEGATION):\n  equal, both return the same.\n")
	entries, err := ReadEntries(root, "p")
	require.NoError(t, err)
	require.Len(t, entries, 1)
	e := entries[0]
	assert.Equal(t, "p/p.go", e.File)
	assert.Equal(t, "bound", e.Func)
	assert.Equal(t, "rows > slots", e.Code)
	assert.Equal(t, []string{"CONDITIONALS_BOUNDARY", "CONDITIONALS_NEGATION"}, e.Mutators)

	src, err := readSource(root, "p/p.go")
	require.NoError(t, err)
	assert.Equal(t, "bound", src.enclosing(4))
	assert.Equal(t, "limit", src.enclosing(10))
	assert.Equal(t, "verdict", src.enclosing(13))
	assert.Equal(t, "", src.enclosing(1))

	at := Mutant{File: "p/p.go", Mutator: "CONDITIONALS_BOUNDARY", Line: 4, Column: 10} // the '>'
	assert.Same(t, e, match(entries, src, at))
	for name, m := range map[string]Mutant{
		"another mutator":  {File: "p/p.go", Mutator: "ARITHMETIC_BASE", Line: 4, Column: 10},
		"another column":   {File: "p/p.go", Mutator: "CONDITIONALS_BOUNDARY", Line: 4, Column: 2},
		"another function": {File: "p/p.go", Mutator: "CONDITIONALS_BOUNDARY", Line: 13, Column: 10},
		"another file":     {File: "p/q.go", Mutator: "CONDITIONALS_BOUNDARY", Line: 4, Column: 10},
		"past the end":     {File: "p/p.go", Mutator: "CONDITIONALS_BOUNDARY", Line: 99, Column: 1},
	} {
		assert.Nil(t, match(entries, src, m), name)
	}
}

func TestAMalformedEntryIsAnError(t *testing.T) {
	root := t.TempDir()
	write(t, root, "p/mutants.txt", "- `p.go` in bound: `x` (BOUNDARY):\n")
	_, err := ReadEntries(root, "p")
	assert.ErrorContains(t, err, "mutants.txt:1: not an entry")
	none, err := ReadEntries(root, "nothing-here")
	require.NoError(t, err)
	assert.Empty(t, none)
}

func TestGuards(t *testing.T) {
	root := t.TempDir()
	write(t, root, "p.go", fixtureSource)
	src, err := readSource(root, "p.go")
	require.NoError(t, err)
	guards := []Guard{{Module: "m", File: "p.go", What: "admission", Funcs: []string{"verdict"}}, {Module: "n", File: "p.go", What: "ledger"}}
	assert.Equal(t, "admission (verdict)", guardOf(guards, "m", src, Mutant{File: "p.go", Line: 13}))
	assert.Equal(t, "", guardOf(guards, "m", src, Mutant{File: "p.go", Line: 4}))
	assert.Equal(t, "ledger", guardOf(guards, "n", src, Mutant{File: "p.go", Line: 4}))
	assert.Equal(t, "", guardOf(guards, "o", src, Mutant{File: "p.go", Line: 4}))
}

// A gremlins report is counted by status; a lived mutant an entry
// matches is equivalent, one in a guarded area fails the run.
func TestResultsFromAReport(t *testing.T) {
	root := t.TempDir()
	write(t, root, "p/p.go", fixtureSource)
	write(t, root, "p/mutants.txt", "- `p.go` in `bound`: `rows > slots` (CONDITIONALS_BOUNDARY):\n  the same.\n")
	write(t, root, "report.json", `{"files": [{"file_name": "p.go", "mutations": [
		{"type": "CONDITIONALS_BOUNDARY", "status": "LIVED", "line": 4, "column": 10},
		{"type": "CONDITIONALS_BOUNDARY", "status": "LIVED", "line": 13, "column": 10},
		{"type": "ARITHMETIC_BASE", "status": "KILLED", "line": 10, "column": 12},
		{"type": "ARITHMETIC_BASE", "status": "KILLED", "line": 10, "column": 12},
		{"type": "ARITHMETIC_BASE", "status": "KILLED", "line": 10, "column": 12},
		{"type": "INVERT_NEGATIVES", "status": "TIMED OUT", "line": 4, "column": 1},
		{"type": "INVERT_NEGATIVES", "status": "NOT COVERED", "line": 4, "column": 1},
		{"type": "INVERT_NEGATIVES", "status": "NOT VIABLE", "line": 4, "column": 1}]}]}`)
	entries, err := ReadEntries(root, "p")
	require.NoError(t, err)
	r := &Result{Module: "m", Entries: entries}
	guards := []Guard{{Module: "m", File: "p/p.go", What: "verdict mapper", Funcs: []string{"verdict"}}}
	require.NoError(t, r.add(guards, filepath.Join(root, "report.json"), root, "p"))
	require.NoError(t, r.add(guards, filepath.Join(root, "none.json"), root, "p"), "no report: gremlins found no mutant")
	r.sort()
	assert.Equal(t, 3, r.Killed)
	assert.Equal(t, 1, r.TimedOut)
	assert.Equal(t, 1, r.NotCovered)
	assert.Equal(t, 1, r.NotViable)
	require.Len(t, r.Equivalent, 1)
	assert.Equal(t, 4, r.Equivalent[0].Line)
	require.Len(t, r.Lived, 1)
	assert.Equal(t, "verdict mapper (verdict)", r.Lived[0].Guard)
	assert.InDelta(t, 75.0, r.Efficacy(), 1e-9)
	assert.InDelta(t, 60.0, r.RawEfficacy(), 1e-9)
	assert.Equal(t, []string{"m: efficacy 75.00% under 95%", "m: lived in the verdict mapper (verdict): p/p.go:13:10 CONDITIONALS_BOUNDARY"}, r.Failures(95))
	assert.Equal(t, []string{"m: lived in the verdict mapper (verdict): p/p.go:13:10 CONDITIONALS_BOUNDARY"}, r.Failures(70))

	var out strings.Builder
	r.Print(&out)
	assert.Contains(t, out.String(), "lived: p/p.go:13:10 CONDITIONALS_BOUNDARY  [verdict mapper (verdict)]")
	assert.Contains(t, out.String(), "equivalent: p/p.go:4:10 CONDITIONALS_BOUNDARY")
	out.Reset()
	failed := Summary(&out, []*Result{r}, 95)
	assert.Len(t, failed, 2)
	assert.Contains(t, out.String(), "75.00%")
}

func TestAnEntryNoMutantMatchedIsWarnedAbout(t *testing.T) {
	r := &Result{Module: "m", Entries: []*Entry{{File: "p/p.go", Func: "f", Code: "x", Mutators: []string{"A"}, Mutated: true}}}
	var out strings.Builder
	r.Print(&out)
	assert.Contains(t, out.String(), "warning: no lived mutant matched the equivalent-mutant entry p/p.go in f")
	assert.Equal(t, 0.0, (&Result{}).Efficacy())
	assert.Equal(t, 0.0, (&Result{}).RawEfficacy())
}

func TestNestedPackagesAndFiles(t *testing.T) {
	pkgs := []string{".", "pool", "pool/internal/tiercheck", "poolx"}
	assert.Equal(t, []string{`^pool/`, `^pool/internal/tiercheck/`, `^poolx/`}, nestedPackages(".", pkgs))
	assert.Equal(t, []string{`^internal/tiercheck/`}, nestedPackages("pool", pkgs))
	assert.Empty(t, nestedPackages("poolx", pkgs))

	dir := t.TempDir()
	for _, f := range []string{"a.go", "a_test.go", "b.go", "notes.txt"} {
		write(t, dir, f, "package p\n")
	}
	require.NoError(t, os.Mkdir(filepath.Join(dir, "sub.go"), 0o755))
	files, err := packageFiles(dir)
	require.NoError(t, err)
	assert.Equal(t, []string{"a.go", "b.go"}, files)
}

// Every mutants.txt of the repository parses, and each entry still
// names a file, a function in it and code on one of its lines, so an
// entry cannot outlive the code it excuses.
func TestTheRepositoryEntriesNameLiveCode(t *testing.T) {
	repo := filepath.Join("..", "..")
	found := 0
	for _, m := range modules.Repo.Modules {
		mod := filepath.Join(repo, filepath.FromSlash(m.Dir))
		err := filepath.WalkDir(mod, func(p string, d os.DirEntry, err error) error {
			if err != nil || d.IsDir() || d.Name() != "mutants.txt" {
				return err
			}
			pkg, err := filepath.Rel(mod, filepath.Dir(p))
			require.NoError(t, err)
			entries, err := ReadEntries(mod, filepath.ToSlash(pkg))
			require.NoError(t, err)
			for _, e := range entries {
				found++
				src, err := readSource(mod, e.File)
				if !assert.NoError(t, err, "%s: %s", p, e) {
					continue
				}
				ok := false
				for i, line := range src.lines {
					ok = ok || strings.Contains(line, e.Code) && src.enclosing(i+1) == e.Func
				}
				assert.True(t, ok, "%s: no line of %s in %s holds %q", p, e.File, e.Func, e.Code)
			}
			return nil
		})
		require.NoError(t, err)
	}
	assert.Greater(t, found, 0)
}

// Every guard names a file of its module, and each function it names is
// declared there, so a guard cannot outlive the code it protects.
func TestTheGuardsNameLiveCode(t *testing.T) {
	repo := filepath.Join("..", "..")
	for _, g := range Guards {
		src, err := readSource(filepath.Join(repo, g.Module), g.File)
		if !assert.NoError(t, err, "guard %q of %s", g.What, g.Module) {
			continue
		}
		for _, fn := range g.Funcs {
			declared := false
			for _, line := range src.lines {
				if strings.HasPrefix(line, "func "+fn+"(") || (strings.HasPrefix(line, "func (") && strings.Contains(line, ") "+fn+"(")) {
					declared = true
				}
			}
			assert.True(t, declared, "guard %q: %s/%s declares no func %s", g.What, g.Module, g.File, fn)
		}
	}
}
