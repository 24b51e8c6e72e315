package soak

import (
	"context"
	"fmt"
	"time"

	"github.com/kvshare/kvshare/tools/internal/roundtrip"
)

// Config is one soak's shape. Start from [Defaults].
type Config struct {
	// Duration is how long lenders keep starting rounds; a round under
	// way finishes.
	Duration time.Duration
	// Seed makes the run reproducible (the choices, not the timing).
	Seed uint64
	// Lenders is the number of backends over the one store.
	Lenders int
	// Slots and RowBytes shape each lender's region; ViewRows bounds one
	// attempt's rows.
	Slots    int
	RowBytes int64
	ViewRows int
	// Names is the size of the name space rows are drawn from.
	Names int
	// Store opens each lender's driver; nil means the embedded in-memory
	// store ([EmbeddedStore]: bounded, half the names' bytes, two workers
	// per driver).
	Store roundtrip.Store
	// KeyPrefix starts every key; each run adds its own segment
	// (package runprefix), as a put never overwrites.
	KeyPrefix string
	// Wait bounds each round's wait for its attempts to quiesce, and
	// each shutdown.
	Wait time.Duration
	// Faults, when not nil, runs beside the lenders for the whole soak,
	// breaking the store now and then (a provider killed and restarted)
	// until its context ends. The store may then leave an attempt's
	// access unprovable: such an attempt never quiesces, so the round
	// checks its outcome alone, and the lender retires its region at
	// once: it shuts its backend down, checks that Shutdown names what is
	// held, keeps that memory for good (never touched again, never freed)
	// and lends a fresh region.
	Faults func(ctx context.Context)
	// Reclaim, with Faults, makes a lender win such memory back instead
	// of retiring its region: its backend reclaims (binding's
	// Backend.Reclaim, the driver destroying its store client and opening
	// a fresh one); every unprovable attempt must then quiesce, its slots
	// are fenced, and the lender's next round first checks that no byte
	// of a fence changed. It needs drivers that can recycle.
	Reclaim bool
}

// reclaimWait bounds a reclaim: longer than the store's own 60 s cap on
// a transfer, which the calls inside it may have to run out.
const reclaimWait = 90 * time.Second

// Defaults is ten minutes of four lenders of 64 slots of 16 KiB.
func Defaults() Config {
	return Config{
		Duration:  10 * time.Minute,
		Seed:      1,
		Lenders:   4,
		Slots:     64,
		RowBytes:  16 << 10,
		ViewRows:  24,
		Names:     2048,
		KeyPrefix: "kvshare",
		Wait:      time.Minute,
	}
}

// Short is Defaults for one minute.
func Short() Config {
	c := Defaults()
	c.Duration = time.Minute
	return c
}

// Validate names the first field out of range.
func (c Config) Validate() error {
	switch {
	case c.Duration <= 0:
		return fmt.Errorf("soak: duration is %v, want > 0", c.Duration)
	case c.Lenders <= 0:
		return fmt.Errorf("soak: lenders is %d, want > 0", c.Lenders)
	case c.Slots < 3:
		return fmt.Errorf("soak: slots is %d, want >= 3 (three attempts a round)", c.Slots)
	case c.RowBytes <= 0:
		return fmt.Errorf("soak: row bytes is %d, want > 0", c.RowBytes)
	case c.ViewRows <= 0:
		return fmt.Errorf("soak: view rows is %d, want > 0", c.ViewRows)
	case c.Names <= 0:
		return fmt.Errorf("soak: names is %d, want > 0", c.Names)
	case c.Wait <= 0:
		return fmt.Errorf("soak: wait is %v, want > 0", c.Wait)
	case c.Reclaim && c.Faults == nil:
		return fmt.Errorf("soak: reclaim asks for faults: without them nothing is left unprovable")
	}
	return nil
}
