package roundtrip

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math/rand/v2"
	"time"

	"github.com/kvshare/kvshare/contract"
	"github.com/kvshare/kvshare/nodeclient"
)

// Role is what an engine process of the round trip through a node does.
type Role string

// The two engines of the round trip through a node.
const (
	// Publisher lends its slots, fills them from the seed and publishes
	// every row.
	Publisher Role = "publish"
	// Fetcher looks every row up, then fetches the rows present into
	// slots of its own and checks every byte against what the seed makes.
	Fetcher Role = "fetch"
)

// EngineConfig is one engine process of the round trip through a node:
// the node's socket, its role, and the run's shape (Rows, RowBytes,
// ViewRows and Seed of a [Config]; both engines must be given the same).
type EngineConfig struct {
	Socket string
	Role   Role
	Config Config
}

// EngineReport is what one engine process did, as it prints it (JSON)
// for the process that started it.
type EngineReport struct {
	Role Role  `json:"role"`
	PID  int   `json:"pid"`
	Lent int64 `json:"lent_bytes"`
	// Moved is the publish's or the fetch's rows by status, bytes
	// delivered and time from the first submission to the last
	// quiescence.
	Moved Phase `json:"moved"`
	// Lookup is the fetcher's lookup of every row before its fetch.
	Lookup EngineLookup `json:"lookup"`
	// Checked counts rows fetched and compared; Mismatches those whose
	// bytes differ from what the seed makes.
	Checked    int `json:"checked"`
	Mismatches int `json:"mismatches"`
	// Returned says the lend was returned and unmapped on both sides.
	Returned bool `json:"returned"`
}

// EngineLookup is what the fetcher's lookups found: the rows asked
// about, those Present, the sum of each view's bound, and their time.
type EngineLookup struct {
	Views, Asked, Present, Bound int
	Elapsed                      time.Duration
}

// RunEngine is one engine of the round trip through a node: it dials
// the node, lends Rows slots of RowBytes as one sealed memfd, and
// publishes (Publisher) or looks up and fetches what is present
// (Fetcher), then returns the lend and says goodbye. An error means the
// engine could not do its part; the report holds what it did before.
// Memory the node did not give back stays mapped (the client keeps it).
func RunEngine(ctx context.Context, e EngineConfig, pid int) (EngineReport, error) {
	cfg := e.Config
	rep := EngineReport{Role: e.Role, PID: pid}
	if err := cfg.Validate(); err != nil {
		return rep, err
	}
	if e.Role != Publisher && e.Role != Fetcher {
		return rep, fmt.Errorf("roundtrip: engine role %q: want %q or %q", e.Role, Publisher, Fetcher)
	}
	ctx, cancel := context.WithTimeout(ctx, cfg.Timeout)
	defer cancel()
	c, err := nodeclient.Dial(ctx, e.Socket, nodeclient.Options{Engine: "roundtrip-" + string(e.Role), Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		return rep, err
	}
	closeCtx, stop := context.WithTimeout(context.WithoutCancel(ctx), cleanupTimeout)
	defer stop()
	defer func() { _ = c.Close(closeCtx) }()
	l, err := c.Lend(ctx, nodeclient.Geometry{SlotBytes: cfg.RowBytes, SlotCount: cfg.Rows, Regions: 1})
	if err != nil {
		return rep, err
	}
	rep.Lent = l.Bytes()
	vs := views(cfg)
	if e.Role == Publisher {
		seeded(cfg.Seed, func(r io.Reader) {
			for i := range cfg.Rows {
				_, _ = io.ReadFull(r, l.Slot(0, i))
			}
		})
		rep.Moved, err = moveThrough(ctx, l, contract.PutDir, vs, cfg.RowBytes)
	} else {
		err = rep.lookupAndFetch(ctx, c, l, vs, cfg)
	}
	if rerr := l.Return(closeCtx); rerr != nil {
		return rep, errors.Join(err, fmt.Errorf("roundtrip: return the lend: %w", rerr))
	}
	rep.Returned = true
	return rep, err
}

// lookupAndFetch asks the node about every view, fetches the rows
// present into slots poisoned first, and checks every fetched row.
func (rep *EngineReport) lookupAndFetch(ctx context.Context, c *nodeclient.Client, l *nodeclient.Lend, vs []contract.View, cfg Config) error {
	for i := range cfg.Rows {
		slot := l.Slot(0, i)
		for j := range slot {
			slot[j] = poisonByte
		}
	}
	start := time.Now()
	var present []contract.View
	for _, v := range vs {
		res, err := c.Lookup(ctx, v, nodeclient.LookupOptions{Every: true})
		if err != nil {
			return err
		}
		rep.Lookup.Views++
		rep.Lookup.Bound += res.Bound
		g := contract.Group{}
		for i, p := range res.Rows {
			rep.Lookup.Asked++
			if p == contract.Present {
				rep.Lookup.Present++
				g.Slots, g.Names = append(g.Slots, v.Groups[0].Slots[i]), append(g.Names, v.Groups[0].Names[i])
			}
		}
		if len(g.Slots) > 0 {
			present = append(present, contract.View{Groups: []contract.Group{g}})
		}
	}
	rep.Lookup.Elapsed = time.Since(start)
	var err error
	rep.Moved, err = moveThrough(ctx, l, contract.GetDir, present, cfg.RowBytes)
	if err != nil {
		return err
	}
	want := make([]byte, cfg.RowBytes)
	seeded(cfg.Seed, func(r io.Reader) {
		fetched := map[int32]bool{}
		for _, v := range present {
			for _, s := range v.Groups[0].Slots {
				fetched[s] = true
			}
		}
		for i := range cfg.Rows {
			_, _ = io.ReadFull(r, want)
			if fetched[int32(i)] {
				rep.Checked++
				if !bytes.Equal(l.Slot(0, i), want) {
					rep.Mismatches++
				}
			}
		}
	})
	return nil
}

// seeded hands fill the reproducible pseudo-random stream of seed (the
// main job's: the same bytes fill its publisher's slots).
func seeded(seed uint64, fill func(io.Reader)) {
	var key [32]byte
	binary.LittleEndian.PutUint64(key[:], seed)
	fill(rand.NewChaCha8(key))
}

// moveThrough submits every view through the node at once and waits for
// each to quiesce; only rows the outcomes mark delivered count.
func moveThrough(ctx context.Context, l *nodeclient.Lend, dir contract.Direction, vs []contract.View, rowBytes int64) (Phase, error) {
	var p Phase
	start := time.Now()
	attempts := make([]*nodeclient.Attempt, 0, len(vs))
	for _, v := range vs {
		var a *nodeclient.Attempt
		var err error
		if dir == contract.GetDir {
			a, err = l.Fetch(ctx, v, nodeclient.TransferOptions{})
		} else {
			a, err = l.Publish(ctx, v, nodeclient.TransferOptions{})
		}
		if err != nil {
			return p, fmt.Errorf("roundtrip: %v through the node: %w", dir, err)
		}
		attempts = append(attempts, a)
	}
	p.Attempts = len(attempts)
	for _, a := range attempts {
		select {
		case <-a.Done():
		case <-ctx.Done():
			return p, fmt.Errorf("roundtrip: %v did not quiesce: %w", a, ctx.Err())
		}
		o, _ := a.Outcome()
		for i, s := range o.Rows {
			p.Rows[s]++
			if o.Delivered[i] {
				p.Delivered++
			}
		}
	}
	p.Elapsed = time.Since(start)
	p.Bytes = int64(p.Delivered) * rowBytes
	return p, nil
}
