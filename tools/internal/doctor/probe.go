package doctor

import (
	"bytes"
	"crypto/rand"
	"errors"
	"fmt"
	"time"

	"github.com/kvshare/kvshare/keys"
	"github.com/kvshare/kvshare/mooncakesdk"
)

// probeName is the probe object's name; its key is the run's prefix,
// "/v1/" and the name in hex, as kvshare writes every key.
const probeName = "probe"

// probeKey is the probe object's key under prefix.
func probeKey(prefix string) (string, error) {
	stem, err := keys.NewStem(prefix)
	if err != nil {
		return "", err
	}
	return stem.Key([]byte(probeName))
}

// probe puts one object of n random bytes under key from one half of a
// buffer, confirms it with an exists-check (a put's 0 alone proves
// nothing), gets it into the other half and compares, then closes the
// client. It returns the lines of CheckPut, CheckGet, CheckRemove and
// CheckClose, in that order.
//
// Memory a transfer may still touch is never given back: after
// TRANSFER_FAIL, or a call that failed as a whole, the buffer stays
// registered and mapped and the client is not destroyed.
func probe(c mooncakesdk.Client, key string, n int) []Finding {
	p := &prober{c: c, key: key, n: n}
	put := p.put()
	get := p.get()
	remove := p.remove()
	return []Finding{put, get, remove, p.close()}
}

// prober is one probe's state.
type prober struct {
	c          mooncakesdk.Client
	key        string
	n          int
	mem        *probeMemory
	registered bool
	stored     bool // the put was confirmed
	kept       string
}

func (p *prober) put() Finding {
	var err error
	if p.mem, err = mapProbe(2 * p.n); err != nil {
		return fail(CheckPut, "%v", err)
	}
	_, _ = rand.Read(p.mem.bytes[:p.n])
	if err := p.c.RegisterBuffer(p.mem.base(), uint64(2*p.n)); err != nil {
		return fail(CheckPut, "registering the probe's %s buffer: %v", size(int64(2*p.n)), err)
	}
	p.registered = true

	start := time.Now()
	res := []int64{0}
	if err := p.c.BatchPutFrom([]string{p.key}, []uintptr{p.mem.addr(0)}, []uint64{uint64(p.n)}, res); err != nil {
		return fail(CheckPut, "put of %s: %v%s", p.key, err, p.callFailed(err))
	}
	if code := mooncakesdk.Code(res[0]); code != mooncakesdk.OK {
		return fail(CheckPut, "put of %s (%s) answered %v%s", p.key, size(int64(p.n)), code, p.answerHint(code))
	}
	exist := []int32{0}
	if err := p.c.BatchIsExist([]string{p.key}, exist); err != nil {
		return fail(CheckPut, "put of %s answered 0, then the exists-check: %v%s", p.key, err, p.callFailed(err))
	}
	if exist[0] != 1 {
		return fail(CheckPut, "put of %s answered 0, but the exists-check answered %v: no complete object stands behind the key",
			p.key, mooncakesdk.Code(exist[0]))
	}
	p.stored = true
	return ok(CheckPut, "%s stored under %s and confirmed by an exists-check, in %v",
		size(int64(p.n)), p.key, since(start))
}

func (p *prober) get() Finding {
	if !p.stored {
		return skip(CheckGet, "not run: the probe put failed")
	}
	start := time.Now()
	res := []int64{0}
	if err := p.c.BatchGetInto([]string{p.key}, []uintptr{p.mem.addr(p.n)}, []uint64{uint64(p.n)}, res); err != nil {
		return fail(CheckGet, "get of %s: %v%s", p.key, err, p.callFailed(err))
	}
	code := mooncakesdk.Code(res[0])
	switch {
	case code == mooncakesdk.Code(p.n) && bytes.Equal(p.mem.bytes[:p.n], p.mem.bytes[p.n:]):
		return ok(CheckGet, "%s read back in %v, byte-identical", size(int64(p.n)), since(start))
	case code == mooncakesdk.Code(p.n):
		return fail(CheckGet, "get of %s answered %d bytes, but they differ from the bytes put", p.key, code)
	case code >= 0:
		return fail(CheckGet, "get of %s answered %d bytes, want %d", p.key, code, p.n)
	}
	return fail(CheckGet, "get of %s answered %v%s", p.key, code, p.answerHint(code))
}

func (p *prober) remove() Finding {
	if !p.stored {
		return skip(CheckRemove, "not run: nothing was stored")
	}
	r, can := p.c.(mooncakesdk.Remover)
	if !can {
		return skip(CheckRemove, "the SDK client has no remove call: the probe (%s under %s) stays in the pool until the pool evicts it or its segment goes",
			size(int64(p.n)), p.key)
	}
	// The exists-check and the get just granted a read lease: force.
	start := time.Now()
	if err := r.Remove(p.key, true); err != nil {
		return fail(CheckRemove, "remove of %s: %v", p.key, err)
	}
	res := make([]int32, 1)
	if err := p.c.BatchIsExist([]string{p.key}, res); err != nil {
		return fail(CheckRemove, "exists-check after removing %s: %v", p.key, err)
	}
	if res[0] != 0 {
		return fail(CheckRemove, "%s removed, yet the exists-check answers %d", p.key, res[0])
	}
	return ok(CheckRemove, "%s removed in %v and gone (exists-check 0)", p.key, since(start))
}

// close unregisters the buffer, unmaps it and destroys the client,
// unless a transfer may still touch the buffer.
func (p *prober) close() Finding {
	if p.kept != "" {
		return skip(CheckClose, "not closed: %s, so the probe's buffer stays registered and mapped and the client is not destroyed", p.kept)
	}
	var errs []error
	if p.registered {
		if err := p.c.UnregisterBuffer(p.mem.base()); err != nil {
			errs = append(errs, fmt.Errorf("unregistering the probe's buffer (kept mapped): %w", err))
		} else {
			p.registered = false
		}
	}
	if p.mem != nil && !p.registered {
		if err := p.mem.free(); err != nil {
			errs = append(errs, err)
		}
	}
	if err := p.c.Destroy(); err != nil {
		errs = append(errs, fmt.Errorf("destroying the client: %w", err))
	}
	if err := errors.Join(errs...); err != nil {
		return fail(CheckClose, "%v", err)
	}
	return ok(CheckClose, "buffer unregistered, client destroyed")
}

// callFailed notes a call that failed as a whole: whether a transfer ran
// is then unknown, so the buffer is kept.
func (p *prober) callFailed(err error) string {
	if !errors.Is(err, mooncakesdk.ErrCallFailed) {
		return ""
	}
	p.kept = "a call failed as a whole (whether a transfer ran is unknown)"
	return "; " + p.kept
}

// answerHint explains a store's answer; TRANSFER_FAIL also keeps the
// buffer.
func (p *prober) answerHint(code mooncakesdk.Code) string {
	switch code {
	case mooncakesdk.TransferFail:
		p.kept = "the store answered TRANSFER_FAIL (the transfer may still be running)"
		return ": the segment provider did not complete the transfer in time (over TCP MC_TCP_STATUS_TIMEOUT_SEC, 30 s); is it running and reachable at the address it registered?"
	case mooncakesdk.NoAvailableHandle:
		return ": the pool has no room, or no segment at all — a client with global_segment_size = 0 stores on segment providers (mooncake_client), and at least one must be running with room"
	case mooncakesdk.ObjectNotFound:
		return ": the object vanished (evicted, or its segment's client went away)"
	case mooncakesdk.RPCFail, mooncakesdk.RPCTimeout:
		return ": the master did not answer"
	}
	return ""
}

// since is the time since start, to the microsecond.
func since(start time.Time) time.Duration { return time.Since(start).Round(time.Microsecond) }
