package mooncakedrv

import (
	"context"
	"errors"
	"sync"

	"github.com/kvshare/kvshare/contract"
	"github.com/kvshare/kvshare/mooncakesdk"
)

// MaxLookupsInStore bounds the lookup calls inside the SDK at once,
// those a lookup abandoned at its deadline included: a lookup that finds
// the bound reached answers Unknown for every name at once, making no
// call, rather than pile up threads behind a store that does not answer.
const MaxLookupsInStore = 8

// Look is the lookup's store call (see the package documentation):
// one batch_is_exist, and get_size for the first key answering 0. What
// it cannot answer stays Unknown.
func (s *store) Look(_ context.Context, keys [][]byte, dst []contract.Presence) []contract.Presence {
	start := len(dst)
	for range keys {
		dst = append(dst, contract.Unknown)
	}
	got := dst[start:]
	p := probes.Get().(*probe)
	defer probes.Put(p)
	p.keys.Reset()
	for _, k := range keys {
		if p.keys.Add(append(p.keys.Tail(), k...)) != nil {
			return dst // CheckKey passed every key at the kit: not reached
		}
	}
	p.exist = resize(p.exist, len(keys))
	client := s.current()
	first := -1
	var size mooncakesdk.Code
	panicked, err := sdkCall(func() error { return client.BatchIsExistList(&p.keys, p.exist) })
	if panicked == nil && err == nil {
		for i, e := range p.exist {
			if e == 0 {
				first = i
				break
			}
		}
		if sizer, ok := client.(mooncakesdk.Sizer); ok && first >= 0 {
			panicked, err = sdkCall(func() error {
				var e error
				size, e = askSize(sizer, string(keys[first]))
				return e
			})
		}
	}
	s.count(false, panicked)
	if panicked != nil || err != nil {
		if panicked != nil {
			s.log.Error("mooncakedrv: lookup: the SDK panicked; the names are Unknown", "panic", panicked)
		}
		return dst
	}
	for i, e := range p.exist {
		switch {
		case e == 1:
			got[i] = contract.Present
		case e == 0 && i == first:
			got[i] = sizePresence(size)
		case e == 0:
			got[i] = contract.Absent
		}
	}
	return dst
}

// LookBlocks is true: every lookup is a call to the master.
func (s *store) LookBlocks() bool { return true }

// probe is one lookup's packed keys and answers; pooled.
type probe struct {
	keys  mooncakesdk.KeyList
	exist []int32
}

var probes = sync.Pool{New: func() any { return new(probe) }}

// askSize is get_size's answer for key as a code: the size when it
// answered one, its error code otherwise.
func askSize(s mooncakesdk.Sizer, key string) (mooncakesdk.Code, error) {
	n, err := s.GetSize(key)
	var ce *mooncakesdk.CallError
	switch {
	case errors.As(err, &ce):
		return ce.Code, nil
	case err != nil:
		return 0, err
	}
	return mooncakesdk.Code(n), nil
}

// sizePresence is what get_size's answer says of a key batch_is_exist
// answered 0 for.
func sizePresence(c mooncakesdk.Code) contract.Presence {
	switch {
	case c == mooncakesdk.ReplicaIsNotReady:
		return contract.InFlight
	case c == mooncakesdk.ObjectNotFound, c == 0:
		return contract.Absent
	case c > 0:
		return contract.Present // complete by now: a get would read it whole
	}
	return contract.Absent // no get_size (no Sizer), or another code: batch_is_exist's 0 stands
}
