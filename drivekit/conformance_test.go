//go:build unix

package drivekit_test

import (
	"log/slog"
	"testing"

	"github.com/kvshare/kvshare/conformance"
	"github.com/kvshare/kvshare/contract"
	"github.com/kvshare/kvshare/drivekit"
)

// The toy store of Example, on the kit, passes the conformance suite:
// every check it has the hooks for (beside the kit's Pause it has none
// of memdrv's scenario hooks, so those checks skip). The kit keeps the rules, whatever store
// it runs over.
func TestTheToyStorePassesTheConformanceSuite(t *testing.T) {
	for _, workers := range []int{1, 3} {
		conformance.Run(t, conformance.Harness{New: func() (*conformance.Subject, error) {
			s := &toyStore{objects: map[string][]byte{}}
			d := drivekit.New(s, drivekit.Options{
				Name:    "toy",
				Workers: workers,
				Caps:    contract.Capabilities{Cancel: true, AbsentIsMiss: true, LookupInFlight: true, MultiSpan: true},
				Logger:  slog.New(slog.DiscardHandler),
			})
			return &conformance.Subject{Driver: d, Seed: s.seed, Object: s.object, Pause: d.Pause}, nil
		}})
	}
}

// seed stores a copy of data under key, as another writer would.
func (s *toyStore) seed(key string, data []byte) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.objects[key] = append([]byte(nil), data...)
}

// object returns a copy of the object under key.
func (s *toyStore) object(key string) ([]byte, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	obj, ok := s.objects[key]
	return append([]byte(nil), obj...), ok
}
