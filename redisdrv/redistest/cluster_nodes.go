package redistest

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
)

// nodeLine is one line of a CLUSTER NODES answer: one node as the
// answering node sees it.
type nodeLine struct {
	id        string
	addr      string // the client address it announces, "ip:port"
	busPort   int
	flags     []string       // myself, master, slave, fail?, fail, handshake, noaddr, …
	connected bool           // link-state "connected"
	slots     [][2]int       // the slot ranges it owns, inclusive
	migrating map[int]string // slot → ID of the node it migrates to ([slot->-id])
	importing map[int]string // slot → ID of the node it imports from ([slot-<-id])
}

// has reports whether the line carries flag.
func (l nodeLine) has(flag string) bool { return slices.Contains(l.flags, flag) }

// parseNodes reads a CLUSTER NODES answer: per line "<id> <ip:port@cport[,hostname]>
// <flags> <master> <ping-sent> <pong-recv> <config-epoch> <link-state>
// <slot> …", where a slot is "N", "N-M", "[N->-id]" or "[N-<-id]".
func parseNodes(text string) ([]nodeLine, error) {
	var lines []nodeLine
	for raw := range strings.SplitSeq(text, "\n") {
		raw = strings.TrimSpace(raw)
		if raw == "" {
			continue
		}
		f := strings.Fields(raw)
		if len(f) < 8 {
			return nil, fmt.Errorf("%w: CLUSTER NODES line %q has %d fields, not 8 or more", ErrCluster, raw, len(f))
		}
		l := nodeLine{id: f[0], flags: strings.Split(f[2], ","), connected: f[7] == "connected"}
		addr, bus, ok := strings.Cut(f[1], "@")
		bus, _, _ = strings.Cut(bus, ",")
		port, err := strconv.Atoi(bus)
		if !ok || err != nil {
			return nil, fmt.Errorf("%w: CLUSTER NODES line %q: address %q is not ip:port@cport", ErrCluster, raw, f[1])
		}
		l.addr, l.busPort = addr, port
		for _, s := range f[8:] {
			if err := l.addSlot(s); err != nil {
				return nil, fmt.Errorf("%w: CLUSTER NODES line %q: %v", ErrCluster, raw, err)
			}
		}
		lines = append(lines, l)
	}
	return lines, nil
}

// addSlot reads one slot field of a CLUSTER NODES line into l.
func (l *nodeLine) addSlot(s string) error {
	if inner, ok := strings.CutPrefix(s, "["); ok {
		inner, ok = strings.CutSuffix(inner, "]")
		if !ok {
			return fmt.Errorf("slot field %q has no ']'", s)
		}
		for _, dir := range []string{"->-", "-<-"} {
			n, id, found := strings.Cut(inner, dir)
			if !found {
				continue
			}
			slot, err := parseSlot(n)
			if err != nil {
				return err
			}
			m := &l.migrating
			if dir == "-<-" {
				m = &l.importing
			}
			if *m == nil {
				*m = map[int]string{}
			}
			(*m)[slot] = id
			return nil
		}
		return fmt.Errorf("slot field %q is neither [N->-id] nor [N-<-id]", s)
	}
	from, to, isRange := strings.Cut(s, "-")
	if !isRange {
		to = from
	}
	lo, err := parseSlot(from)
	if err != nil {
		return err
	}
	hi, err := parseSlot(to)
	if err != nil {
		return err
	}
	if hi < lo {
		return fmt.Errorf("slot range %q runs backwards", s)
	}
	l.slots = append(l.slots, [2]int{lo, hi})
	return nil
}

// parseSlot reads a slot number, 0 to NumSlots-1.
func parseSlot(s string) (int, error) {
	n, err := strconv.Atoi(s)
	if err != nil || n < 0 || n >= NumSlots {
		return 0, fmt.Errorf("slot %q is not a number from 0 to %d", s, NumSlots-1)
	}
	return n, nil
}

// parseInfo reads a CLUSTER INFO answer, "field:value" lines.
func parseInfo(text string) map[string]string {
	info := map[string]string{}
	for line := range strings.SplitSeq(text, "\n") {
		if k, v, ok := strings.Cut(strings.TrimSpace(line), ":"); ok {
			info[k] = v
		}
	}
	return info
}
