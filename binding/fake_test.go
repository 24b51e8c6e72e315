package binding

import (
	"context"
	"fmt"
	"log/slog"
	"slices"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/kvshare/kvshare/contract"
	"github.com/kvshare/kvshare/keys"
)

// fakeDriver is a driver the test scripts call by call. Every call it
// admits becomes a fakeOp that the test finishes by hand, unless answer
// is set: then the call settles inside Put/Get, which call onChange
// before they return. It touches no memory, so its regions need none.
type fakeDriver struct {
	caps contract.Capabilities
	// answer, if set, settles every admitted call at once (access Ended).
	answer func(dir direction, key string) contract.RowStatus
	// enter, if set, is asked first on each Put/Get (n counts calls from
	// 1); when it returns handled it decides what Put/Get return.
	enter func(n int, dir direction, b contract.RowBatch, onChange func()) (op contract.Operation, err error, handled bool)
	// register, if set, decides what Register returns.
	register func(r contract.SlotRegion) (contract.Registration, error)
	// refuseUnregister refuses this many Unregister calls, as busy.
	refuseUnregister int
	// drainFalse answers false to this many Drain calls.
	drainFalse int
	// cancelEnds makes Cancel end every pending row Cancelled, with
	// access Ended, and call onChange.
	cancelEnds bool

	mu     sync.Mutex
	n      int
	ops    []*fakeOp
	next   contract.Registration
	live   map[contract.Registration]contract.SlotRegion
	events []string // register, unregister, drain, release... in order
}

func newFake(caps contract.Capabilities) *fakeDriver {
	return &fakeDriver{caps: caps, live: map[contract.Registration]contract.SlotRegion{}}
}

func (d *fakeDriver) event(format string, args ...any) {
	d.mu.Lock()
	d.events = append(d.events, fmt.Sprintf(format, args...))
	d.mu.Unlock()
}

func (d *fakeDriver) Events() []string {
	d.mu.Lock()
	defer d.mu.Unlock()
	return slices.Clone(d.events)
}

func (d *fakeDriver) Capabilities() contract.Capabilities { return d.caps }

func (d *fakeDriver) Register(r contract.SlotRegion) (contract.Registration, error) {
	var hook func() (contract.Registration, error)
	if d.register != nil {
		hook = func() (contract.Registration, error) { return d.register(r) }
	}
	return enrol(d, d.live, r, fmt.Sprintf("register %#x", r.Base), hook)
}

// failRegistration makes the nth Register call (counting from 1) answer
// what fail returns; every other call gets handle n.
func (d *fakeDriver) failRegistration(nth int, fail func() (contract.Registration, error)) {
	n := 0
	d.register = func(contract.SlotRegion) (contract.Registration, error) {
		n++
		if n == nth {
			return fail()
		}
		return contract.Registration(n), nil
	}
}

func (d *fakeDriver) Unregister(h contract.Registration) error {
	return revoke(d, d.live, h, "unregister", &d.refuseUnregister)
}

// enrol answers a registration as Register and RegisterRegions do: hook
// decides the answer when it is set, else the next handle is handed out;
// a non-zero handle is live in table until revoked. The event reads
// "<what> -> <handle>", followed by the error when hook answered.
func enrol[V any](d *fakeDriver, table map[contract.Registration]V, v V, what string, hook func() (contract.Registration, error)) (contract.Registration, error) {
	if hook != nil {
		h, err := hook()
		d.event("%s -> %d %v", what, h, err)
		if h != 0 {
			d.mu.Lock()
			table[h] = v
			d.mu.Unlock()
		}
		return h, err
	}
	d.mu.Lock()
	d.next++
	h := d.next
	table[h] = v
	d.mu.Unlock()
	d.event("%s -> %d", what, h)
	return h, nil
}

// revoke answers a revocation as Unregister and UnregisterRegions do:
// refused as busy while *refuse > 0 (counting down), refused for a handle
// not live, otherwise removed from table. The events read "<what> <handle>"
// followed by "refused" or "unknown" when refused.
func revoke[V any](d *fakeDriver, table map[contract.Registration]V, h contract.Registration, what string, refuse *int) error {
	d.mu.Lock()
	if *refuse > 0 {
		*refuse--
		d.mu.Unlock()
		d.event("%s %d refused", what, h)
		return fmt.Errorf("%w: %s %d: busy", contract.ErrDriverRejected, what, h)
	}
	_, ok := table[h]
	delete(table, h)
	d.mu.Unlock()
	if !ok {
		d.event("%s %d unknown", what, h)
		return fmt.Errorf("%w: %s %d: unknown handle", contract.ErrDriverRejected, what, h)
	}
	d.event("%s %d", what, h)
	return nil
}

func (d *fakeDriver) Live() int {
	d.mu.Lock()
	defer d.mu.Unlock()
	return len(d.live)
}

func (d *fakeDriver) Put(b contract.RowBatch, onChange func()) (contract.Operation, error) {
	return d.admit(publish, b, nil, onChange)
}

func (d *fakeDriver) Get(b contract.RowBatch, h contract.Hint, onChange func()) (contract.Operation, error) {
	return d.admit(fetch, b, h, onChange)
}

func (d *fakeDriver) admit(dir direction, b contract.RowBatch, h contract.Hint, onChange func()) (contract.Operation, error) {
	d.mu.Lock()
	d.n++
	n := d.n
	d.mu.Unlock()
	if d.enter != nil {
		if op, err, handled := d.enter(n, dir, b, onChange); handled {
			return op, err
		}
	}
	op := &fakeOp{d: d, dir: dir, batch: b, hint: h, onChange: onChange, keys: make([]string, len(b.Rows))}
	for i, r := range b.Rows {
		// The names are borrowed until access ends: keep the keys, and a
		// copy of the rows for the tests to look at later.
		op.keys[i] = b.Key(i)
		op.rows = append(op.rows, contract.Row{Name: slices.Clone(r.Name), Spans: slices.Clone(r.Spans)})
	}
	op.st.Rows = make([]contract.RowStatus, len(b.Rows))
	d.mu.Lock()
	d.ops = append(d.ops, op)
	d.mu.Unlock()
	if d.answer != nil {
		st := make([]contract.RowStatus, len(b.Rows))
		for i, k := range op.keys {
			st[i] = d.answer(dir, k)
		}
		op.finish(contract.Ended, st...)
	}
	return op, nil
}

// answerReadyBut makes every call settle at once, each row Ready except
// the one whose key is the key of name under prefix "t", which gets s.
func (d *fakeDriver) answerReadyBut(t testing.TB, name string, s contract.RowStatus) {
	odd := keyOf(t, name)
	d.answer = func(_ direction, k string) contract.RowStatus {
		if k == odd {
			return s
		}
		return contract.Ready
	}
}

// Ops returns the operations admitted so far, in order.
func (d *fakeDriver) Ops() []*fakeOp {
	d.mu.Lock()
	defer d.mu.Unlock()
	return slices.Clone(d.ops)
}

// Calls returns how many times Put or Get was called.
func (d *fakeDriver) Calls() int {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.n
}

func (d *fakeDriver) Drain(context.Context) bool {
	d.mu.Lock()
	ok := d.drainFalse == 0
	if !ok {
		d.drainFalse--
	}
	d.mu.Unlock()
	d.event("drain %v", ok)
	return ok
}

func (d *fakeDriver) Close() error { return nil }

// fakeOp is one admitted call of a fakeDriver.
type fakeOp struct {
	d        *fakeDriver
	dir      direction
	batch    contract.RowBatch
	keys     []string       // the batch's keys, built at admission
	rows     []contract.Row // a copy of the batch's rows, made at admission
	hint     contract.Hint
	onChange func()

	mu      sync.Mutex
	st      contract.OpState
	cancels int
	// poll, if set, rewrites what Poll returns (or panics).
	poll func(contract.OpState) contract.OpState
	// cancel, if set, runs inside Cancel.
	cancel func()
}

func (o *fakeOp) Poll(dst []contract.RowStatus) contract.OpState {
	o.mu.Lock()
	st := contract.OpState{Rows: append(dst[:0], o.st.Rows...), Access: o.st.Access}
	poll := o.poll
	o.mu.Unlock()
	if poll != nil {
		st = poll(st)
	}
	return st
}

func (o *fakeOp) Cancel() {
	o.mu.Lock()
	o.cancels++
	hook := o.cancel
	ends := o.d.cancelEnds && o.st.Access == contract.Open
	if ends {
		for i, s := range o.st.Rows {
			if s == contract.Pending {
				o.st.Rows[i] = contract.Cancelled
			}
		}
		o.st.Access = contract.Ended
	}
	o.mu.Unlock()
	if hook != nil {
		hook()
	}
	if ends {
		o.onChange()
	}
}

// Cancels returns how many times Cancel was called.
func (o *fakeOp) Cancels() int {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.cancels
}

// Keys returns the batch's keys, as built at admission.
func (o *fakeOp) Keys() []string { return slices.Clone(o.keys) }

// finish sets the rows (one status for all when one is given) and the
// access, then calls onChange.
func (o *fakeOp) finish(access contract.Access, rows ...contract.RowStatus) {
	o.mu.Lock()
	if len(rows) == 1 && len(o.st.Rows) != 1 {
		for i := range o.st.Rows {
			o.st.Rows[i] = rows[0]
		}
	} else if len(rows) > 0 {
		copy(o.st.Rows, rows)
	}
	o.st.Access = access
	o.mu.Unlock()
	o.onChange()
}

// setPoll installs a Poll rewrite.
func (o *fakeOp) setPoll(f func(contract.OpState) contract.OpState) {
	o.mu.Lock()
	o.poll = f
	o.mu.Unlock()
}

// fakeTogether adds RegionsTogether to a fakeDriver.
type fakeTogether struct {
	*fakeDriver
	registerRegions func(specs []contract.RegionSpec) (contract.Registration, error)
	refuseTogether  int

	batches map[contract.Registration][]contract.RegionSpec
}

func newFakeTogether(caps contract.Capabilities) *fakeTogether {
	return &fakeTogether{fakeDriver: newFake(caps), batches: map[contract.Registration][]contract.RegionSpec{}}
}

func (t *fakeTogether) RegisterRegions(specs []contract.RegionSpec) (contract.Registration, error) {
	labels := make([]string, len(specs))
	for i, s := range specs {
		labels[i] = s.Label
	}
	var hook func() (contract.Registration, error)
	if t.registerRegions != nil {
		hook = func() (contract.Registration, error) { return t.registerRegions(specs) }
	}
	return enrol(t.fakeDriver, t.batches, specs, fmt.Sprintf("register-regions %v", labels), hook)
}

func (t *fakeTogether) UnregisterRegions(h contract.Registration) error {
	return revoke(t.fakeDriver, t.batches, h, "unregister-regions", &t.refuseTogether)
}

func (t *fakeTogether) LiveBatches() int {
	t.mu.Lock()
	defer t.mu.Unlock()
	return len(t.batches)
}

// watchedDriver wraps a fakeDriver and its operations: it counts every
// call of a driver or operation method, and while frozen each call blocks
// before it reaches the fake, as a store that stopped answering would.
type watchedDriver struct {
	fake  *fakeDriver
	calls atomic.Int64

	mu     sync.Mutex
	frozen chan struct{} // nil while calls go through
}

var _ contract.Driver = (*watchedDriver)(nil)

func watch(d *fakeDriver) *watchedDriver { return &watchedDriver{fake: d} }

// freeze makes every later call block until thaw is called.
func (w *watchedDriver) freeze() (thaw func()) {
	ch := make(chan struct{})
	w.mu.Lock()
	w.frozen = ch
	w.mu.Unlock()
	return func() {
		w.mu.Lock()
		w.frozen = nil
		w.mu.Unlock()
		close(ch)
	}
}

// Calls returns how many driver and operation methods were called.
func (w *watchedDriver) Calls() int64 { return w.calls.Load() }

func (w *watchedDriver) enter() {
	w.calls.Add(1)
	w.mu.Lock()
	ch := w.frozen
	w.mu.Unlock()
	if ch != nil {
		<-ch
	}
}

func (w *watchedDriver) Capabilities() contract.Capabilities {
	w.enter()
	return w.fake.Capabilities()
}

func (w *watchedDriver) Register(r contract.SlotRegion) (contract.Registration, error) {
	w.enter()
	return w.fake.Register(r)
}

func (w *watchedDriver) Unregister(h contract.Registration) error {
	w.enter()
	return w.fake.Unregister(h)
}

func (w *watchedDriver) Put(b contract.RowBatch, onChange func()) (contract.Operation, error) {
	w.enter()
	return w.op(w.fake.Put(b, onChange))
}

func (w *watchedDriver) Get(b contract.RowBatch, h contract.Hint, onChange func()) (contract.Operation, error) {
	w.enter()
	return w.op(w.fake.Get(b, h, onChange))
}

func (w *watchedDriver) op(op contract.Operation, err error) (contract.Operation, error) {
	if op == nil {
		return nil, err
	}
	return watchedOp{w, op}, err
}

func (w *watchedDriver) Drain(ctx context.Context) bool {
	w.enter()
	return w.fake.Drain(ctx)
}

func (w *watchedDriver) Close() error {
	w.enter()
	return w.fake.Close()
}

// watchedOp is an operation of a watchedDriver.
type watchedOp struct {
	w  *watchedDriver
	op contract.Operation
}

func (o watchedOp) Poll(dst []contract.RowStatus) contract.OpState {
	o.w.enter()
	return o.op.Poll(dst)
}

func (o watchedOp) Cancel() {
	o.w.enter()
	o.op.Cancel()
}

// countingHold counts releases and records them in a driver's events.
type countingHold struct {
	n   atomic.Int32
	log *fakeDriver
}

func (h *countingHold) Release() {
	h.n.Add(1)
	if h.log != nil {
		h.log.event("release")
	}
}

func (h *countingHold) Released() int { return int(h.n.Load()) }

// fakeRegion is a region of fake memory: the fake driver never touches it.
func fakeRegion(i int, kind contract.MemoryKind) contract.SlotRegion {
	return contract.SlotRegion{Base: uintptr(i+1) << 20, SlotBytes: 64, SlotCount: 16, Len: 64 * 16, Kind: kind}
}

var getPut = contract.Capabilities{Put: true, Get: true, Cancel: true, AbsentIsMiss: true}

// fakeBackend binds n host regions of fake memory to d and builds a
// backend with prefix "t".
func fakeBackend(t testing.TB, d contract.Driver, n int, cfg Config) (*Backend, *countingHold) {
	t.Helper()
	regs := make([]contract.SlotRegion, n)
	for i := range regs {
		regs[i] = fakeRegion(i, contract.Host)
	}
	hold := &countingHold{}
	switch f := d.(type) {
	case *fakeDriver:
		hold.log = f
	case *watchedDriver:
		hold.log = f.fake
	}
	return bindBackend(t, d, regs, hold, "t", cfg), hold
}

// bindBackend binds regions to d under hold and builds a backend from
// cfg, with prefix when cfg names none and a logger that drops records
// when it has none.
func bindBackend(t testing.TB, d contract.Driver, regions []contract.SlotRegion, hold Hold, prefix string, cfg Config) *Backend {
	t.Helper()
	r, err := Bind(d, regions, hold)
	require.NoError(t, err)
	if cfg.KeyPrefix == "" {
		cfg.KeyPrefix = prefix
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	b, err := New(r, cfg)
	require.NoError(t, err)
	return b
}

// rowsView is one group in region 0: slots 0..n-1 named "n0", "n1"...
func rowsView(n int) contract.View {
	g := contract.Group{Slots: make([]int32, n), Names: make([][]byte, n)}
	for i := range n {
		g.Slots[i] = int32(i)
		g.Names[i] = fmt.Appendf(nil, "n%d", i)
	}
	return contract.View{Groups: []contract.Group{g}}
}

// keyOf is the key the backend builds for name under prefix "t".
func keyOf(t testing.TB, name string) string {
	t.Helper()
	stem, err := keys.NewStem("t")
	require.NoError(t, err)
	k, err := stem.Key([]byte(name))
	require.NoError(t, err)
	return k
}

// logRecords is a slog handler that keeps every record.
type logRecords struct {
	mu      sync.Mutex
	records []slog.Record
}

func (l *logRecords) Enabled(context.Context, slog.Level) bool { return true }
func (l *logRecords) Handle(_ context.Context, r slog.Record) error {
	l.mu.Lock()
	l.records = append(l.records, r.Clone())
	l.mu.Unlock()
	return nil
}
func (l *logRecords) WithAttrs([]slog.Attr) slog.Handler { return l }
func (l *logRecords) WithGroup(string) slog.Handler      { return l }

// Messages returns the messages logged so far.
func (l *logRecords) Messages() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	ms := make([]string, len(l.records))
	for i, r := range l.records {
		ms[i] = r.Message
	}
	return ms
}

// Count returns how many records carry msg.
func (l *logRecords) Count(msg string) int {
	n := 0
	for _, m := range l.Messages() {
		if m == msg {
			n++
		}
	}
	return n
}

func slogOf(h slog.Handler) *slog.Logger { return slog.New(h) }

// mustStem is the key stem of prefix, as a key maker for batches a test
// hands a driver directly.
func mustStem(t testing.TB, prefix string) keys.Stem {
	t.Helper()
	stem, err := keys.NewStem(prefix)
	require.NoError(t, err)
	return stem
}
