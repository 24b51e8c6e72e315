package soak

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"sync"
	"time"

	"github.com/kvshare/kvshare/contract"
	"github.com/kvshare/kvshare/hostmem"
	"github.com/kvshare/kvshare/memdrv"
	"github.com/kvshare/kvshare/tools/internal/roundtrip"
	"github.com/kvshare/kvshare/tools/internal/runprefix"
)

// EmbeddedStore is the soak's default store: the embedded in-memory
// store, bounded, holding half the bytes of the names (so that it
// evicts all along and a fetch may miss a name published), taken up
// front, two workers a driver.
func EmbeddedStore(cfg Config) (*roundtrip.MemoryStore, error) {
	o := roundtrip.SizedFor(max(cfg.Names/2, 1), cfg.RowBytes)
	o.HugePages = hostmem.HugePages2MiB
	return roundtrip.NewMemoryStore(2, o)
}

// Run soaks cfg.Store (the embedded store, EmbeddedStore, when nil) with cfg.Lenders
// backends for cfg.Duration and checks every promise on the way (see
// the package documentation). An error means a promise broke (or the
// run could not start); the report says what ran until then, and the
// seed reproduces the choices.
func Run(ctx context.Context, cfg Config) (Report, error) {
	rep := Report{Config: cfg}
	if err := cfg.Validate(); err != nil {
		return rep, err
	}
	if cfg.Store == nil {
		m, err := EmbeddedStore(cfg)
		if err != nil {
			return rep, err
		}
		defer func() { _ = m.Close() }() // refused only if a driver still touches it: then it stays
		cfg.Store = m
		rep.Config.Store = cfg.Store
	}
	prefix, err := runprefix.New(cfg.KeyPrefix, "soak")
	if err != nil {
		return rep, err
	}
	rep.RunID = prefix
	s := &soak{cfg: cfg, prefix: prefix, published: make([]bool, cfg.Names)}

	lenders := make([]*lender, cfg.Lenders)
	for i := range lenders {
		mem, err := memdrv.Alloc(cfg.RowBytes, cfg.Slots, contract.Host)
		if err != nil {
			return rep, errors.Join(err, s.release(ctx, lenders[:i], &rep))
		}
		lenders[i] = &lender{name: fmt.Sprintf("lender %d", i), mem: mem}
		if err := lenders[i].bind(ctx, cfg, prefix); err != nil {
			return rep, errors.Join(err, s.release(ctx, lenders[:i+1], &rep))
		}
	}

	start := time.Now()
	deadline := start.Add(cfg.Duration)
	faultsDone := make(chan struct{})
	fctx, stopFaults := context.WithDeadline(ctx, deadline)
	if cfg.Faults != nil {
		go func() { defer close(faultsDone); cfg.Faults(fctx) }()
	} else {
		close(faultsDone)
	}
	reports := make([]Report, len(lenders))
	errs := make([]error, len(lenders))
	var wg sync.WaitGroup
	for i, l := range lenders {
		wg.Go(func() {
			rng := rand.New(rand.NewPCG(cfg.Seed, uint64(i)))
			errs[i] = s.lend(ctx, l, rng, deadline, &reports[i])
		})
	}
	wg.Wait()
	stopFaults()
	<-faultsDone
	rep.Elapsed = time.Since(start)
	for _, r := range reports {
		rep.add(r)
		for i, n := range r.Rows {
			rep.Rows[i] += n
		}
	}
	err = errors.Join(errs...)
	if err == nil {
		err = s.release(ctx, lenders, &rep)
	}
	for _, l := range lenders {
		if l.backend != nil {
			st := l.backend.Stats()
			for i, n := range st.Rows {
				rep.Rows[i] += n
			}
		}
	}
	if m, ok := cfg.Store.(*roundtrip.MemoryStore); ok {
		st := m.Stats()
		rep.Store = &st
	}
	if err != nil {
		return rep, fmt.Errorf("soak %s (seed %d): %w", prefix, cfg.Seed, err)
	}
	return rep, nil
}

// soak is the state the lenders share.
type soak struct {
	cfg    Config
	prefix string

	mu        sync.Mutex
	published []bool           // names some publish was given (they may be stored)
	kept      []*memdrv.Memory // regions retired for an unprovable access: kept for good
}

// release shuts every lender down, checking the promises, and frees its
// memory.
func (s *soak) release(ctx context.Context, lenders []*lender, rep *Report) error {
	var errs []error
	for _, l := range lenders {
		if l == nil {
			continue
		}
		if err := s.checkFences(l, rep); err != nil {
			errs = append(errs, err)
			continue
		}
		if l.backend != nil {
			sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), s.cfg.Wait)
			err := l.unbind(sctx)
			cancel()
			if err != nil {
				errs = append(errs, err) // memory kept
				continue
			}
			rep.ShutdownsChecked++
		}
		if err := l.free(); err != nil {
			errs = append(errs, err)
			continue
		}
		rep.MemoryFreed++
	}
	return errors.Join(errs...)
}

// lend runs rounds on one lender until the deadline.
func (s *soak) lend(ctx context.Context, l *lender, rng *rand.Rand, deadline time.Time, rep *Report) error {
	for time.Now().Before(deadline) {
		if err := ctx.Err(); err != nil {
			return err
		}
		if rng.IntN(50) == 0 {
			if err := s.rebind(ctx, l, rep); err != nil {
				return err
			}
			continue
		}
		if err := s.round(ctx, l, rng, rep); err != nil {
			return err
		}
		rep.Rounds++
	}
	return nil
}

// retire shuts down a lender whose backend holds memory for good (an
// unprovable access): Shutdown must name it, the region is kept (never
// touched or freed again), and the lender goes on with a fresh region
// over a new driver.
func (s *soak) retire(ctx context.Context, l *lender, rep *Report) error {
	sctx, cancel := context.WithTimeout(ctx, s.cfg.Wait)
	defer cancel()
	st := l.backend.Stats()
	if st.CallsUnprovable == 0 {
		return fmt.Errorf("%s: retiring a region, yet the backend counts no unprovable call", l.name)
	}
	labels := l.backend.Shutdown(sctx)
	if len(labels) == 0 {
		return fmt.Errorf("%s: %d calls unprovable, yet Shutdown names nothing held", l.name, st.CallsUnprovable)
	}
	if l.hold.released.Load() {
		return fmt.Errorf("%s: Shutdown names %v held, yet the hold was released", l.name, labels)
	}
	for i, n := range st.Rows {
		rep.Rows[i] += n
	}
	rep.RegionsKept++
	rep.BytesKept += l.mem.Region.Len
	s.mu.Lock()
	s.kept = append(s.kept, l.mem) // kept for good: never freed
	s.mu.Unlock()
	mem, err := memdrv.Alloc(s.cfg.RowBytes, s.cfg.Slots, contract.Host)
	if err != nil {
		return fmt.Errorf("%s: a fresh region: %w", l.name, err)
	}
	l.mem = mem
	return l.bind(ctx, s.cfg, s.prefix)
}

// rebind shuts the lender's backend down in the owner's cleanup order,
// checking every promise, and binds the region again over a new driver.
func (s *soak) rebind(ctx context.Context, l *lender, rep *Report) error {
	sctx, cancel := context.WithTimeout(ctx, s.cfg.Wait)
	defer cancel()
	rows := l.backend.Stats().Rows
	if err := l.unbind(sctx); err != nil {
		return err // the lender's memory is kept: Run frees nothing after an error
	}
	for i, n := range rows {
		rep.Rows[i] += n
	}
	rep.ShutdownsChecked++
	rep.Rebinds++
	return l.bind(ctx, s.cfg, s.prefix)
}
