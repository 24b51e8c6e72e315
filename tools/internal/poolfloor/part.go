package poolfloor

import (
	"sync/atomic"

	"github.com/kvshare/kvshare/contract"
	"github.com/kvshare/kvshare/mooncakesdk"
)

// Part is one SDK call's rows (one put and its exists-check for a put
// part), prepared before the clock starts.
type Part struct {
	dir   contract.Direction
	keys  mooncakesdk.KeyList
	bufs  []uintptr
	sizes []uint64
	codes []int64
	exist []int32
	sub   *Submission
}

// Rows is the part's rows (one call's).
func (p *Part) Rows() int { return len(p.bufs) }

// Submission is one submission of a floor: its parts, how many are
// left, how many rows came back Ready, and a channel closed when the
// last part is done.
type Submission struct {
	parts []*Part
	rows  int
	left  atomic.Int32
	ready atomic.Int64
	done  chan struct{}
}

// RunPart makes the part's calls on client and counts its Ready rows: a
// get answered with the row's size; a put answered 0 whose key then
// exists. A [Loop] runs its parts with it; so may any other scheduler
// of parts (after [Submission.Reset]).
func RunPart(client mooncakesdk.Client, p *Part) {
	ready := 0
	if p.dir == contract.GetDir {
		if client.BatchGetIntoList(&p.keys, p.bufs, p.sizes, p.codes) == nil {
			for i, c := range p.codes {
				if c == int64(p.sizes[i]) {
					ready++
				}
			}
		}
	} else if client.BatchPutFromList(&p.keys, p.bufs, p.sizes, p.codes) == nil &&
		client.BatchIsExistList(&p.keys, p.exist) == nil {
		for i, c := range p.codes {
			if c == 0 && p.exist[i] == 1 {
				ready++
			}
		}
	}
	s := p.sub
	s.ready.Add(int64(ready))
	if s.left.Add(-1) == 0 {
		close(s.done)
	}
}

// Reset readies s for another run of its parts: no row Ready yet, every
// part left, a fresh done channel. [Loop.Submit] calls it.
func (s *Submission) Reset() {
	s.ready.Store(0)
	s.left.Store(int32(len(s.parts)))
	s.done = make(chan struct{})
}

// Done is closed once the last part of the run started by the latest
// Reset is done.
func (s *Submission) Done() <-chan struct{} { return s.done }

// Ready is the rows that came back Ready so far.
func (s *Submission) Ready() int { return int(s.ready.Load()) }

// Rows is the rows of every part.
func (s *Submission) Rows() int { return s.rows }

// Parts are the submission's parts, in the order they are queued.
func (s *Submission) Parts() []*Part { return s.parts }

// Dir is the direction of s's parts (every part of a submission has
// one); a submission without parts counts as a put.
func (s *Submission) Dir() contract.Direction {
	if len(s.parts) > 0 && s.parts[0].dir == contract.GetDir {
		return contract.GetDir
	}
	return contract.PutDir
}
