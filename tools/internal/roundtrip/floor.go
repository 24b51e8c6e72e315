package roundtrip

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"time"

	"github.com/kvshare/kvshare/contract"
	"github.com/kvshare/kvshare/tools/internal/poolfloor"
)

// ErrNoFloor is returned by [Run] when Config.Floor asks for the raw
// floor over a store that has none (only a Mooncake pool has one).
var ErrNoFloor = errors.New("roundtrip: the raw floor is measured over a Mooncake pool only")

// Floor is the raw floor measured beside the job in the same run: the
// same rows in the same calls straight on a client of the pool
// (package poolfloor), once before the job and once after it.
type Floor struct {
	// Shape is the floor's shape: the job's rows, views and call caps,
	// as many goroutines as the driver has workers.
	Shape poolfloor.Shape
	// KeyPrefix is the floor's own prefix; its objects are removed after
	// each round.
	KeyPrefix string
	// Before and After are the rounds before and after the job.
	Before, After FloorRound
}

// FloorRound is one round of the floor: every row put, then got back
// into the slots it came from.
type FloorRound struct {
	Publish, Fetch Phase
}

// GBps is the mean of the two rounds' rates in direction dir, in 10⁹
// bytes a second: the floor the job's rate is divided by.
func (f Floor) GBps(dir contract.Direction) float64 {
	if dir == contract.GetDir {
		return (f.Before.Fetch.GBps() + f.After.Fetch.GBps()) / 2
	}
	return (f.Before.Publish.GBps() + f.After.Publish.GBps()) / 2
}

// Ratios are the job's publish and fetch rates over the floor's (the
// mean of its two rounds); 0 where the floor moved nothing.
func (r Report) Ratios() (publish, fetch float64) {
	if r.Floor == nil {
		return 0, 0
	}
	if f := r.Floor.GBps(contract.PutDir); f > 0 {
		publish = r.Publish.GBps() / f
	}
	if f := r.Floor.GBps(contract.GetDir); f > 0 {
		fetch = r.Fetch.GBps() / f
	}
	return publish, fetch
}

// floorStore is a store whose raw floor a round trip can measure, and
// whose segment it can warm first.
type floorStore interface {
	openFloor(ctx context.Context, cfg Config) (*floorRig, error)
	// warmBytes is the most the floor puts (then removes) before
	// anything is measured; 0: nothing.
	warmBytes() int64
}

// floorName is the name of row i of the floor's round (warming rounds
// count too): the round and the index, as the job's names are its seed
// and the index.
func floorName(round, i int) []byte {
	name := make([]byte, 16)
	binary.BigEndian.PutUint64(name, uint64(round))
	binary.BigEndian.PutUint64(name[8:], uint64(i))
	return name
}

// floorNames are the names of every row of one round.
func floorNames(round, rows int) [][]byte {
	names := make([][]byte, rows)
	for i := range names {
		names[i] = floorName(round, i)
	}
	return names
}

// wait waits for s's parts with ctx as the bound.
func wait(ctx context.Context, s *poolfloor.Submission) error {
	select {
	case <-s.Done():
		return nil
	case <-ctx.Done():
		return fmt.Errorf("roundtrip: the floor's calls did not return: %w", ctx.Err())
	}
}

// floorPhase is what one direction of a floor round moved.
func floorPhase(s *poolfloor.Submission, rowBytes int64, took time.Duration) Phase {
	p := Phase{Attempts: len(s.Parts()), Delivered: s.Ready(), Elapsed: took}
	p.Rows[contract.Ready] = int64(p.Delivered)
	p.Bytes = int64(p.Delivered) * rowBytes
	return p
}
