package conformance

import (
	"context"
	"log/slog"
	"sync"
	"testing"

	"github.com/kvshare/kvshare/contract"
	"github.com/kvshare/kvshare/drivekit"
)

// kitStore is the least a store on drivekit can be: objects in a map,
// copied in and out inside Transfer (so its return proves access
// ended), a lookup that answers at once, no hooks and no client to tear
// down. The kit must keep every rule over it.
type kitStore struct {
	mu      sync.Mutex
	objects map[string][]byte
}

func (s *kitStore) Transfer(c *drivekit.Call) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for i, row := range c.Rows {
		obj, held := s.objects[c.Keys[i]]
		end := &c.Ends[i]
		switch {
		case c.Dir == contract.PutDir && c.OwnWrite[i]:
			end.Status = contract.NotReady
		case c.Dir == contract.PutDir:
			if !held {
				for _, sp := range row.Spans {
					obj = append(obj, at(sp)...)
				}
				s.objects[c.Keys[i]] = obj
			}
			end.Status = contract.Ready
		case !held:
			end.Status = contract.Miss
		case int64(len(obj)) != row.Bytes():
			end.Status = contract.Fault
		default:
			for _, sp := range row.Spans {
				obj = obj[copy(at(sp), obj):]
			}
			end.Status = contract.Ready
		}
	}
}

func (s *kitStore) Look(_ context.Context, keys [][]byte, dst []contract.Presence) []contract.Presence {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, k := range keys {
		p := contract.Absent
		if _, ok := s.objects[string(k)]; ok {
			p = contract.Present
		}
		dst = append(dst, p)
	}
	return dst
}

func (s *kitStore) LookBlocks() bool { return false }

// The suite passes over the least store on the kit, with one worker and
// with several, one row a call and several, on FIFO workers and on the
// gets-first pool: every check it has the
// hooks for (the kit's Pause; none of memdrv's, so those checks skip).
// It found that the kit refused an idle Recycle of a store with nothing
// to tear down.
func TestTheSuitePassesOverAStoreOnTheKit(t *testing.T) {
	for _, o := range []drivekit.Options{{Workers: 1}, {Workers: 3, CallRows: 4}, {Workers: 1, GetsFirst: true}, {Workers: 2, CallRows: 4, GetsFirst: true}} {
		Run(t, Harness{New: func() (*Subject, error) {
			s := &kitStore{objects: map[string][]byte{}}
			o.Name, o.Logger = "kit", slog.New(slog.DiscardHandler)
			o.Caps = contract.Capabilities{Cancel: true, AbsentIsMiss: true, LookupInFlight: true, MultiSpan: true}
			d := drivekit.New(s, o)
			seed := func(key string, data []byte) {
				s.mu.Lock()
				defer s.mu.Unlock()
				s.objects[key] = append([]byte(nil), data...)
			}
			object := func(key string) ([]byte, bool) {
				s.mu.Lock()
				defer s.mu.Unlock()
				obj, ok := s.objects[key]
				return append([]byte(nil), obj...), ok
			}
			return &Subject{Driver: d, Seed: seed, Object: object, Pause: d.Pause}, nil
		}})
	}
}
