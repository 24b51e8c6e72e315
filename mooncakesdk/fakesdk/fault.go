package fakesdk

import (
	"errors"
	"fmt"

	"github.com/kvshare/kvshare/mooncakesdk"
)

// Op names the client call a fault strikes.
type Op uint8

// The calls of a [mooncakesdk.Client].
const (
	Put        Op = iota + 1 // BatchPutFrom
	Get                      // BatchGetInto
	Exist                    // BatchIsExist
	Register                 // RegisterBuffer
	Unregister               // UnregisterBuffer
	Health                   // HealthCheck
	Remove                   // Remove (mooncakesdk.Remover)
	Size                     // GetSize (mooncakesdk.Sizer)
)

// String names the op: "put", "get", …
func (o Op) String() string {
	switch o {
	case Put:
		return "put"
	case Get:
		return "get"
	case Exist:
		return "exist"
	case Register:
		return "register"
	case Unregister:
		return "unregister"
	case Health:
		return "health"
	case Remove:
		return "remove"
	case Size:
		return "size"
	}
	return fmt.Sprintf("Op(%d)", uint8(o))
}

// data reports whether o is a data call (put, get, exist): one with keys,
// per-key answers and the store's latency.
func (o Op) data() bool { return o == Put || o == Get || o == Exist }

// cFunc is the C function the real client calls for o; the fake's
// errors name it the same way.
func (o Op) cFunc() string {
	switch o {
	case Put:
		return "mooncake_store_batch_put_from"
	case Get:
		return "mooncake_store_batch_get_into"
	case Exist:
		return "mooncake_store_batch_is_exist"
	case Register:
		return "mooncake_store_register_buffer"
	case Unregister:
		return "mooncake_store_unregister_buffer"
	case Health:
		return "mooncake_store_health_check"
	case Remove:
		return "mooncake_store_remove"
	case Size:
		return "mooncake_store_get_size"
	}
	return o.String()
}

// answer is the error a register, unregister, health, remove or size
// call returns for the scripted function answer code, as the real client
// turns it: the health check's own 1 ("not initialised") and 2 ("master unreachable")
// wrap [mooncakesdk.ErrUnhealthy], every other code is a
// [*mooncakesdk.CallError] naming the C function.
func (o Op) answer(code mooncakesdk.Code) error {
	if o == Health && (code == 1 || code == 2) {
		return fmt.Errorf("%w: health check answered %d", mooncakesdk.ErrUnhealthy, code)
	}
	return &mooncakesdk.CallError{Func: o.cFunc(), Code: code}
}

// Phase says when a fault strikes relative to the data.
type Phase uint8

const (
	// BeforeLanding: the fault strikes before any byte moved: a put
	// stores nothing, a get writes nothing, a register or unregister
	// changes no registration.
	BeforeLanding Phase = iota
	// AfterLanding: the data moved first (a put's object is stored
	// complete, a get's buffer is written; a register or unregister took
	// effect), then the fault strikes.
	AfterLanding
)

// Fault is one scripted misbehaviour of the store. Exactly one of Code,
// Fail, Panic, Hold and Vanish says what happens.
type Fault struct {
	// Op is the call it strikes.
	Op Op
	// Key narrows it: a per-key fault (Code) answers for that key only;
	// a call-level one (Fail, Panic, Hold, Vanish) strikes only calls
	// holding the key. Empty: a Code answers for every key of the call, a
	// call-level fault strikes every call.
	Key string

	// Code is the answer. For Put, Get and Exist it is the per-key
	// answer, replacing the store's own (a put's or get's data move
	// according to Phase and Running, and only for a key the store would
	// have served); in a put it answers for the first copy of a key
	// given twice, the later copies answering 0 as always. For Register,
	// Unregister, Health, Remove and Size it is the function's own
	// answer, replacing the fake's (for Health, 1 and 2 are the library's
	// "not initialised" and "master unreachable", wrapping
	// [mooncakesdk.ErrUnhealthy]; every other code is a
	// [*mooncakesdk.CallError], and a Size call so struck answers no
	// size).
	Code mooncakesdk.Code
	// Fail makes the whole call answer the library's -1: the method
	// returns a [*mooncakesdk.CallError] and writes no result. With
	// AfterLanding the data moved before it failed.
	Fail bool
	// Panic makes the call panic (after the data moved, with
	// AfterLanding), as a broken binding might.
	Panic bool
	// Hold stops the call at the gate until the gate opens: a data call
	// after it found the store's state (a put's keys are claimed, in
	// flight from then on; a get's and an exist's answers are fixed), a
	// register or unregister before it changes anything.
	Hold *Gate
	// Vanish, on a Put, Get or Exist, drops the complete object under
	// Key (or under every key of the call, when Key is empty), as
	// eviction, a segment provider silent past the master's client_ttl,
	// or the destroy of the client that mounted the segment does; later
	// gets answer OBJECT_NOT_FOUND (-704). With BeforeLanding the objects
	// vanish as the call arrives, so it finds them gone; with
	// AfterLanding once its data moved, so it is answered as if they
	// were there. The call itself is otherwise served as usual.
	// [Store.Vanish] does the same between calls.
	Vanish bool

	// Phase places Code, Fail, Panic and Vanish before or after the data
	// moved (for Register and Unregister: before or after the
	// registration changed; for a Code on Exist and for Health it makes
	// no difference).
	Phase Phase
	// Running, with a Code on Put or Get, models a transfer the store
	// gave up on while it still runs: TRANSFER_FAIL after the transfer
	// timeout (over TCP the status-frame timeout
	// MC_TCP_STATUS_TIMEOUT_SEC, 30 s by default; over RDMA the 60 s cap).
	// The call answers Code once [Options.TransferTimeout] has passed
	// (its put in flight all along); once Running opens, the transfer
	// reads the put's buffer or writes the object into the get's buffer,
	// then ends. A put's object is not stored. The caller keeps the
	// memory mapped until Running's Wait returns. A key the store would
	// not have served moves nothing and does not wait.
	Running *Gate

	// Times is how many calls the fault strikes; 0 means every matching
	// call.
	Times int
}

// ErrScript: a fault that cannot be scripted (no kind, two kinds, a
// modifier that does not fit).
var ErrScript = errors.New("fakesdk: fault cannot be scripted")

func (f Fault) check() error {
	kinds := 0
	for _, set := range []bool{f.Code != 0, f.Fail, f.Panic, f.Hold != nil, f.Vanish} {
		if set {
			kinds++
		}
	}
	switch {
	case f.Op < Put || f.Op > Size:
		return fmt.Errorf("%w: unknown op %v", ErrScript, f.Op)
	case kinds != 1:
		return fmt.Errorf("%w: exactly one of Code, Fail, Panic, Hold, Vanish must be set, got %d", ErrScript, kinds)
	case f.Running != nil && (f.Code == 0 || (f.Op != Put && f.Op != Get)):
		return fmt.Errorf("%w: Running needs a Code on a put or a get", ErrScript)
	case f.Times < 0:
		return fmt.Errorf("%w: Times %d is negative", ErrScript, f.Times)
	case f.Key != "" && !f.Op.data():
		return fmt.Errorf("%w: Key narrows only put, get and exist faults", ErrScript)
	case f.Vanish && !f.Op.data():
		return fmt.Errorf("%w: Vanish strikes only put, get and exist calls", ErrScript)
	}
	return nil
}

// scripted is a fault with the calls it struck so far.
type scripted struct {
	Fault
	struck int
}

func (f *scripted) callLevel() bool { return f.Fail || f.Panic || f.Hold != nil || f.Vanish }

// spent reports whether the fault struck its Times calls already; one
// with Times 0 (unlimited) never is.
func (f *scripted) spent() bool { return f.Times > 0 && f.struck >= f.Times }

// strike counts one call struck.
func (f *scripted) strike() { f.struck++ }
