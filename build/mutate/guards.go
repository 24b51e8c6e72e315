package mutate

import "slices"

// A Guard is code where no mutant may live: a file of a module, the
// whole file or only the named functions (methods by their name alone).
type Guard struct {
	Module, File, What string
	Funcs              []string
}

// Guards are the areas no lived mutant is allowed in: the verdict
// mapper, the ledger, access-end evidence, admission and the backend's
// result recording.
var Guards = []Guard{
	{Module: "mooncakedrv", File: "verdict.go", What: "verdict mapper"},
	{Module: "mooncakedrv", File: "ledger.go", What: "ledger"},
	{Module: "mooncakedrv", File: "transfer.go", What: "access-end evidence", Funcs: []string{"callFailure", "call", "taint", "mark", "settle"}},
	{Module: "drivekit", File: "operation.go", What: "access-end evidence", Funcs: []string{"endAccessLocked"}},
	{Module: "drivekit", File: "worker.go", What: "access-end evidence", Funcs: []string{"run", "recordLocked"}},
	{Module: "drivekit", File: "admit.go", What: "admission"},
	{Module: "binding", File: "validate.go", What: "admission"},
	{Module: "rowbatch", File: "check.go", What: "admission"},
	{Module: "binding", File: "results.go", What: "result recording"},
}

// guardOf names the guarded area a lived mutant of module is in ("" if
// none).
func guardOf(guards []Guard, module string, src *source, m Mutant) string {
	for _, g := range guards {
		if g.Module != module || g.File != m.File {
			continue
		}
		if len(g.Funcs) == 0 {
			return g.What
		}
		if fn := src.enclosing(m.Line); slices.Contains(g.Funcs, fn) {
			return g.What + " (" + fn + ")"
		}
	}
	return ""
}
