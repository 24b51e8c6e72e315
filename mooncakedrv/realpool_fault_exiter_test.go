package mooncakedrv

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"slices"
	"syscall"
	"time"

	"github.com/kvshare/kvshare/contract"
	"github.com/kvshare/kvshare/patience"
)

// The exiting client: this test binary run again with exiterEnv set to a
// store config (and exiterPrefixEnv to the key prefix, exiterModeEnv to
// how it ends). It is a client process of the pool with one lender: it
// opens it, says "ready", waits for "go" on stdin, publishes faultRows
// rows and fetches the rows seed-A-… (which the test seeded), waits until
// each of its driver's workers has a call inside the SDK — blocked
// there, since the test froze the provider — and says "blocked". Then, in mode "exit", it
// shuts the backend down within exiterShutdown, prints its report (one
// JSON line: exiterReport) and exits 0 with the calls still inside; in
// mode "sigterm" it waits for the test's SIGTERM. Any failure exits 1,
// saying why on stderr.
//
// It runs from init, before TestMain: it runs no test, and the
// environment it needs (MC_TCP_BIND_ADDRESS, the status and RPC
// timeouts) is inherited from the test process that started it.
const (
	exiterEnv       = "KVSHARE_REALPOOL_EXITER"
	exiterPrefixEnv = "KVSHARE_REALPOOL_EXITER_PREFIX"
	exiterModeEnv   = "KVSHARE_REALPOOL_EXITER_MODE"
	exiterShutdown  = 500 * time.Millisecond
)

// exiterReport is what the exiting client says before it exits.
type exiterReport struct {
	// PutsInside and GetsInside are its calls inside the SDK as it exits.
	PutsInside, GetsInside int
	// Verdicts and Access tally its operations' rows and access.
	Verdicts, Access string
	// Held is what Shutdown said it still holds.
	Held []string
	// RowsLent is its backend's Stats.RowsLent.
	RowsLent int64
	// Broken lists the operations whose access left Open with verdicts
	// or an access other than the rule's (realpool_fault_rule_test.go).
	Broken []string
}

// init makes this binary the exiting client when exiterEnv is set.
func init() {
	if os.Getenv(exiterEnv) != "" {
		runExiter()
	}
}

// runExiter is the exiting client's main; it never returns.
func runExiter() {
	fail := func(format string, args ...any) {
		fmt.Fprintf(os.Stderr, "exiter: "+format+"\n", args...)
		syscall.Exit(1)
	}
	l, err := newFaultLender(os.Getenv(exiterEnv), "exited", 2*faultRows, os.Getenv(exiterPrefixEnv), &switchWriter{w: os.Stderr})
	if err != nil {
		fail("opening its lender: %v", err)
	}
	pub, got := rowNames("pub-"+os.Getenv(exiterModeEnv), faultRows), rowNames("seed-A", faultRows)
	l.load(pub, span(0, faultRows))
	fmt.Println("ready")
	if line, err := bufio.NewReader(os.Stdin).ReadString('\n'); err != nil || line != "go\n" {
		fail("waiting for go: %q, %v", line, err)
	}
	inside := func() (puts, gets int) {
		_, puts = l.client.calls(kindPut)
		_, gets = l.client.calls(kindGet)
		return puts, gets
	}
	waitInside := func(want func(p, g int) bool) {
		// A patient bound, its extensions logged on stderr.
		ctx, cancel := patience.Bound{Span: realWait, What: "the exiting client's calls reaching the SDK"}.Context(context.Background())
		defer cancel()
		for p, g := inside(); !want(p, g); p, g = inside() {
			if ctx.Err() != nil {
				fail("%d put and %d get calls inside the SDK after the bound (%v, extended only while the process was starved)", p, g, realWait)
			}
			time.Sleep(time.Millisecond)
		}
	}
	// The publish first: its calls take the workers puts may have (all
	// but one, and no more than calls_in_flight), the fetch's the rest
	// the driver may run. Every call the driver may have inside the SDK
	// at once is then there, blocked on the frozen provider for seconds
	// at least (the status-frame timeout).
	if _, err := l.be.Publish(namedView(pub, span(0, faultRows)), nil); err != nil {
		fail("publish: %v", err)
	}
	waitInside(func(p, _ int) bool { return p > 0 })
	if _, err := l.be.Fetch(namedView(got, span(faultRows, 2*faultRows)), nil); err != nil {
		fail("fetch: %v", err)
	}
	full := l.drv.cfg.Workers
	if n := l.drv.cfg.CallsInFlight; n > 0 {
		full = min(full, min(n, max(1, full-1))+n)
	}
	waitInside(func(p, g int) bool { return g > 0 && p+g == full })
	p, g := inside()
	fmt.Printf("blocked %d %d\n", p, g)
	if os.Getenv(exiterModeEnv) == "sigterm" {
		select {} // until the test's SIGTERM
	}
	// An input: Shutdown must give up with the calls still inside.
	ctx, cancel := context.WithTimeout(context.Background(), exiterShutdown)
	defer cancel()
	rep := exiterReport{Held: l.be.Shutdown(ctx), RowsLent: l.be.Stats().RowsLent}
	var verdicts, access tally
	for _, r := range l.drv.recorded() {
		st := r.op.Poll(nil)
		for _, s := range st.Rows {
			verdicts.add(dirName(r.dir), s.String(), 1)
		}
		access.add("", st.Access.String(), 1)
		if st.Access == contract.Open {
			continue // blocked inside the SDK: nothing decided yet
		}
		if want, wantAccess := l.rule(r); !slices.Equal(want, st.Rows) || wantAccess != st.Access {
			rep.Broken = append(rep.Broken, fmt.Sprintf("%s of %s…: %v %v, the rule says %v %v", dirName(r.dir), r.names[0], st.Rows, st.Access, want, wantAccess))
		}
	}
	rep.Verdicts, rep.Access = verdicts.String(), access.String()
	rep.PutsInside, rep.GetsInside = inside()
	if err := json.NewEncoder(os.Stdout).Encode(rep); err != nil {
		fail("report: %v", err)
	}
	// The calls are still inside the SDK: exit as a production build's
	// os.Exit does (exit_group, no C exit handlers; see TestMain on why
	// a -race binary must not run them over a live client).
	syscall.Exit(0)
}
