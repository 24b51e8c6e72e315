package doctor

import (
	"fmt"
	"io"
	"slices"
	"strings"
)

// Verdict is what one check found.
type Verdict int

// The verdicts, from good to not run.
const (
	// OK: the check passed.
	OK Verdict = iota
	// Warn: the check passed, with advice (for example an unpinned
	// library). A warning does not fail the doctor.
	Warn
	// Fail: the check failed; the detail says why and what to change.
	Fail
	// Skip: the check did not run, because a check it needs failed or
	// because it cannot run here; the detail says which.
	Skip
)

// String is the verdict as printed: "ok", "warn", "FAIL", "skip".
func (v Verdict) String() string {
	switch v {
	case OK:
		return "ok"
	case Warn:
		return "warn"
	case Fail:
		return "FAIL"
	case Skip:
		return "skip"
	}
	return fmt.Sprintf("Verdict(%d)", int(v))
}

// Finding is one check's line: its name, its verdict and what it saw.
type Finding struct {
	Check   string
	Verdict Verdict
	Detail  string

	covers []string // a CheckRest line: the checks it stands for
}

// CheckRest names the one line that stands for every check a failure
// left unrun (Skip; its detail names them and says why).
// [Report.Find] finds each of them as skipped, with that detail.
const CheckRest = "the rest"

// rest is the CheckRest line for the checks named.
func rest(checks []string, why string) Finding {
	return Finding{Check: CheckRest, Verdict: Skip, Detail: fmt.Sprintf("the %d other checks (%s): not run: %s", len(checks), strings.Join(checks, ", "), why), covers: checks}
}

func ok(check, format string, args ...any) Finding {
	return Finding{Check: check, Verdict: OK, Detail: fmt.Sprintf(format, args...)}
}

func warn(check, format string, args ...any) Finding {
	return Finding{Check: check, Verdict: Warn, Detail: fmt.Sprintf(format, args...)}
}

func fail(check, format string, args ...any) Finding {
	return Finding{Check: check, Verdict: Fail, Detail: fmt.Sprintf(format, args...)}
}

func skip(check, format string, args ...any) Finding {
	return Finding{Check: check, Verdict: Skip, Detail: fmt.Sprintf(format, args...)}
}

// Report is every check of one doctor run, in the order they ran.
type Report struct {
	// File is the store config the doctor read.
	File     string
	Findings []Finding
}

// Failed reports whether any check failed.
func (r Report) Failed() bool {
	for _, f := range r.Findings {
		if f.Verdict == Fail {
			return true
		}
	}
	return false
}

// Find returns the finding of the named check, if it is in the report:
// a check the CheckRest line stands for is found as skipped, with that
// line's detail.
func (r Report) Find(check string) (Finding, bool) {
	for _, f := range r.Findings {
		if f.Check == check {
			return f, true
		}
		if slices.Contains(f.covers, check) {
			return Finding{Check: check, Verdict: Skip, Detail: f.Detail}, true
		}
	}
	return Finding{}, false
}

// checks counts the checks the report stands for.
func (r Report) checks() int {
	n := 0
	for _, f := range r.Findings {
		n += max(1, len(f.covers))
	}
	return n
}

// Write prints one line per finding ("check  verdict  detail"; a detail
// of several lines continues under its first), then the outcome.
func (r Report) Write(w io.Writer) {
	const indent = 15 + 6
	for _, f := range r.Findings {
		detail := strings.ReplaceAll(strings.TrimRight(f.Detail, "\n"), "\n", "\n"+strings.Repeat(" ", indent))
		fmt.Fprintf(w, "%-15s%-6s%s\n", f.Check, f.Verdict, detail)
	}
	failed := 0
	for _, f := range r.Findings {
		if f.Verdict == Fail {
			failed++
		}
	}
	if failed == 0 {
		fmt.Fprintf(w, "doctor: every check passed for %s\n", r.File)
		return
	}
	fmt.Fprintf(w, "doctor: %d of %d checks FAILED for %s\n", failed, r.checks(), r.File)
}
