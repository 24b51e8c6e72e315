package conformance

import (
	"errors"
	"fmt"

	"github.com/kvshare/kvshare/contract"
)

// lending is one registration: a region, or a batch of regions
// registered together.
type lending struct {
	handle   contract.Registration
	arenas   []*arena
	together bool
	revoked  bool // Unregister or UnregisterRegions returned nil
}

// lend maps memory for a region of slots slots (not registered).
func (b *bench) lend(slots int, kind contract.MemoryKind) *arena {
	b.r.Helper()
	b.seq++
	a, err := mapArena(&b.mem, fmt.Sprintf("r%d", b.seq), b.h.SlotBytes, slots, kind)
	if err != nil {
		b.r.Fatalf("%v", err)
	}
	b.mem.Lock()
	b.arenas = append(b.arenas, a)
	b.mem.Unlock()
	return a
}

// region lends and registers a region of slots slots, of the kind the
// suite lends (Host, or Device with Harness.LendDevice).
func (b *bench) region(slots int) *arena {
	b.r.Helper()
	a := b.lend(slots, b.kind())
	if _, err := b.register(a); err != nil {
		b.r.Fatalf("Register of region %s (%d slots of %d bytes): %v", a.label, slots, b.h.SlotBytes, err)
	}
	return a
}

// register registers a's region. A registration that may be live (nil
// error, or a *RegistrationError with a handle) is recorded for
// teardown; an error that certifies nothing wrapping neither sentinel is
// reported, and the memory kept.
func (b *bench) register(a *arena) (*lending, error) {
	b.r.Helper()
	var reg contract.Registration
	var err error
	_, p := b.call("Register", func() { reg, err = b.d.Register(a.region) })
	if p != nil {
		a.keep = "Register panicked"
		b.r.Fatalf("Register of region %s panicked: %v", a.label, p)
	}
	return b.recordRegistration(reg, err, false, a)
}

func (b *bench) recordRegistration(reg contract.Registration, err error, together bool, as ...*arena) (*lending, error) {
	b.r.Helper()
	what := "Register"
	if together {
		what = "RegisterRegions"
	}
	var re *contract.RegistrationError
	switch {
	case err == nil:
		if reg == 0 {
			b.r.Errorf("%s returned registration 0 and no error: a live registration is never 0", what)
		}
		l := &lending{handle: reg, arenas: as, together: together}
		b.lendings = append(b.lendings, l)
		return l, nil
	case errors.As(err, &re):
		if re.MayBeLive() {
			b.lendings = append(b.lendings, &lending{handle: re.Registration, arenas: as, together: together})
		}
	case !errors.Is(err, contract.ErrDriverRejected):
		b.r.Errorf("%s failed with an error that is neither ErrDriverRejected nor a *RegistrationError: %v", what, err)
		for _, a := range as {
			a.keep = what + " failed without saying whether anything was registered"
		}
	}
	return nil, err
}

// unregister revokes a registration; a nil error marks it revoked.
func (b *bench) unregister(l *lending) error {
	b.r.Helper()
	var err error
	what := "Unregister"
	if l.together {
		what = "UnregisterRegions"
	}
	ok, p := b.call(what, func() {
		if l.together {
			err = b.d.(contract.RegionsTogether).UnregisterRegions(l.handle)
		} else {
			err = b.d.Unregister(l.handle)
		}
	})
	switch {
	case !ok:
		return fmt.Errorf("%s did not return", what)
	case p != nil:
		b.r.Errorf("%s panicked: %v", what, p)
		return fmt.Errorf("%s panicked", what)
	case err == nil:
		l.revoked = true
	}
	return err
}

// lendingOf returns the live lending of a.
func (b *bench) lendingOf(a *arena) *lending {
	for _, l := range b.lendings {
		for _, x := range l.arenas {
			if x == a && !l.revoked {
				return l
			}
		}
	}
	b.r.Fatalf("conformance: region %s is not registered", a.label)
	return nil
}

// live returns the regions registered and not revoked.
func (b *bench) live() []contract.SlotRegion {
	var out []contract.SlotRegion
	for _, l := range b.lendings {
		if !l.revoked {
			for _, a := range l.arenas {
				out = append(out, a.region)
			}
		}
	}
	return out
}
