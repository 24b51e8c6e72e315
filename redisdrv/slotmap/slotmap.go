package slotmap

import (
	"context"
	"errors"
	"fmt"
	"net"
	"slices"
	"strconv"
	"strings"

	"github.com/redis/rueidis"

	"github.com/kvshare/kvshare/redisdrv/internal/keyslot"
)

// Slots is how many hash slots a Redis Cluster has.
const Slots = keyslot.Count

// Range is slots Lo to Hi, both included, served by the node at Addr
// (host:port).
type Range struct {
	Lo, Hi int
	Addr   string
}

// String is "lo-hi" ("lo" for one slot).
func (r Range) String() string {
	if r.Lo == r.Hi {
		return strconv.Itoa(r.Lo)
	}
	return fmt.Sprintf("%d-%d", r.Lo, r.Hi)
}

// Map is one reading of a cluster's slot map.
type Map struct {
	// Addrs are the nodes serving slots, in the order their ranges
	// came.
	Addrs []string
	// Ranges are the ranges served, by first slot.
	Ranges []Range
	owner  []int16 // slot → index into Addrs, -1 for a slot none serves
}

// Of builds the map of ranges (in any order; a slot given twice is the
// later range's). A range out of 0 to Slots-1, or with Hi below Lo, is
// refused, naming it.
func Of(ranges []Range) (Map, error) {
	m := Map{owner: make([]int16, Slots)}
	for i := range m.owner {
		m.owner[i] = -1
	}
	for _, r := range ranges {
		if r.Lo < 0 || r.Hi < r.Lo || r.Hi >= Slots {
			return Map{}, fmt.Errorf("slotmap: slot range %d-%d of %s is not within 0-%d", r.Lo, r.Hi, r.Addr, Slots-1)
		}
		n := slices.Index(m.Addrs, r.Addr)
		if n < 0 {
			n = len(m.Addrs)
			m.Addrs = append(m.Addrs, r.Addr)
		}
		for s := r.Lo; s <= r.Hi; s++ {
			m.owner[s] = int16(n)
		}
	}
	m.Ranges = m.runs(func(n int16) bool { return n >= 0 })
	return m, nil
}

// runs lists the maximal runs of slots whose owner keep says to keep,
// each with its owner's address ("" for none).
func (m Map) runs(keep func(int16) bool) []Range {
	var out []Range
	for lo := 0; lo < len(m.owner); {
		n := m.owner[lo]
		hi := lo
		for hi+1 < len(m.owner) && m.owner[hi+1] == n {
			hi++
		}
		if keep(n) {
			addr := ""
			if n >= 0 {
				addr = m.Addrs[n]
			}
			out = append(out, Range{Lo: lo, Hi: hi, Addr: addr})
		}
		lo = hi + 1
	}
	return out
}

// Gaps are the ranges of slots no node serves, by first slot (Addr
// empty); none when every slot is served.
func (m Map) Gaps() []Range { return m.runs(func(n int16) bool { return n < 0 }) }

// Covered counts the slots some node serves.
func (m Map) Covered() int {
	n := 0
	for _, o := range m.owner {
		if o >= 0 {
			n++
		}
	}
	return n
}

// Node is the index into Addrs of the node serving key's slot, -1 when
// none serves it.
func (m Map) Node(key string) int { return int(m.owner[keyslot.Of(key)]) }

// RangesOf are the ranges the node at addr serves.
func (m Map) RangesOf(addr string) []Range {
	var out []Range
	for _, r := range m.Ranges {
		if r.Addr == addr {
			out = append(out, r)
		}
	}
	return out
}

// SlotsText lists the ranges the node at addr serves, "0-5460, 10923",
// or "no slots".
func (m Map) SlotsText(addr string) string {
	rs := m.RangesOf(addr)
	if len(rs) == 0 {
		return "no slots"
	}
	parts := make([]string, len(rs))
	for i, r := range rs {
		parts[i] = r.String()
	}
	return strings.Join(parts, ", ")
}

// Read asks the node c talks to (at asked, host:port) for the slot map
// with CLUSTER SLOTS, within ctx. A node that names itself without a
// host is at asked's host.
func Read(ctx context.Context, c rueidis.Client, asked string) (Map, error) {
	entries, err := c.Do(ctx, c.B().ClusterSlots().Build()).ToArray()
	if err != nil {
		return Map{}, err
	}
	ranges := make([]Range, 0, len(entries))
	for i, e := range entries {
		r, err := entry(e, asked)
		if err != nil {
			return Map{}, fmt.Errorf("slotmap: CLUSTER SLOTS entry %d: %w", i, err)
		}
		ranges = append(ranges, r)
	}
	return Of(ranges)
}

// entry reads one CLUSTER SLOTS entry: [start, end, [host, port, id, …],
// replicas…].
func entry(e rueidis.RedisMessage, asked string) (Range, error) {
	f, err := e.ToArray()
	if err != nil || len(f) < 3 {
		return Range{}, errors.New("not [start, end, node, …]")
	}
	lo, lerr := f[0].AsInt64()
	hi, herr := f[1].AsInt64()
	node, err := f[2].ToArray()
	if err != nil || len(node) < 2 {
		return Range{}, errors.New("the node is not [host, port, …]")
	}
	host, serr := node[0].ToString()
	port, perr := node[1].AsInt64()
	if err := errors.Join(lerr, herr, serr, perr); err != nil {
		return Range{}, err
	}
	addr, err := address(host, port, asked)
	if err != nil {
		return Range{}, err
	}
	return Range{Lo: int(lo), Hi: int(hi), Addr: addr}, nil
}

// address is host:port, an empty host ("" or "?") being asked's.
func address(host string, port int64, asked string) (string, error) {
	if port < 1 || port > 65535 {
		return "", fmt.Errorf("port %d is not a TCP port", port)
	}
	if host == "" || host == "?" {
		h, _, err := net.SplitHostPort(asked)
		if err != nil {
			return "", fmt.Errorf("a node without a host, asked at %q: %w", asked, err)
		}
		host = h
	}
	return net.JoinHostPort(host, strconv.FormatInt(port, 10)), nil
}
