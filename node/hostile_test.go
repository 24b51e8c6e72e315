package node

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"testing"

	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"

	"github.com/kvshare/kvshare/contract"
	"github.com/kvshare/kvshare/memdrv"
	"github.com/kvshare/kvshare/nodewire"
	"github.com/kvshare/kvshare/patience"
)

// hostileLimits are the limits the hostile engines run into.
func hostileLimits(c *Config) {
	c.MaxAttempts = 4
	c.MaxRows = 64
	c.MaxLendBytes = 1 << 20
	c.MaxRegions = 4
	c.MaxFrame = 128 << 10
	c.OutQueue = 8
}

// frame is a frame as given, checked by nothing.
func frame(t nodewire.Type, flags uint16, request uint64, body []byte) []byte {
	h := nodewire.Header{Len: uint32(len(body)), Type: t, Flags: flags, Request: request}
	return append(h.Append(nil), body...)
}

// body is m's body as the codec writes it.
func body(m nodewire.Message) []byte { return m.AppendBody(nil) }

// helloed dials and is welcomed.
func (f *fixture) helloed() *testEngine {
	e, _ := f.attach("hostile")
	return e
}

// pipeFD is the read end of a pipe (closed at the test's end).
func pipeFD(t *testing.T) int {
	var p [2]int
	require.NoError(t, unix.Pipe2(p[:], unix.O_CLOEXEC))
	t.Cleanup(func() { unix.Close(p[0]); unix.Close(p[1]) })
	return p[0]
}

// fileFD is a regular file of size bytes, opened for reading and writing.
func fileFD(t *testing.T, size int64) int {
	file, err := os.CreateTemp(t.TempDir(), "lend")
	require.NoError(t, err)
	require.NoError(t, file.Truncate(size))
	t.Cleanup(func() { file.Close() })
	return int(file.Fd())
}

// counted says which counter a hostile case must move by one.
type counted struct {
	refused nodewire.Code // Counts.Refusals
	ended   nodewire.Code // Counts.Ended
	times   int           // refusals; 0 means 1
}

// TestHostileEngines: each hostile engine gets its clear error — a
// refusal naming the code and the field, or the node's goodbye with the
// code and the end of the connection —, is counted, and an honest round
// trip (publish, lookup, fetch of other engines, every byte checked)
// runs after each, on the same node.
func TestHostileEngines(t *testing.T) {
	f := newFixture(t, hostileLimits)
	stride := int64(nodewire.PageSize)
	cases := []struct {
		name  string
		run   func(t *testing.T, f *fixture)
		count counted
	}{
		{"truncated header", func(t *testing.T, f *fixture) {
			e := f.dial()
			e.raw(frame(nodewire.TypeHello, 0, 1, nil)[:10])
			require.NoError(t, e.c.CloseWrite())
			e.expectGoodbye(nodewire.CodeProtocol)
		}, counted{ended: nodewire.CodeProtocol}},
		{"truncated body", func(t *testing.T, f *fixture) {
			e := f.dial()
			b := frame(nodewire.TypeHello, 0, 1, body(&nodewire.Hello{Version: 1, Engine: "x"}))
			e.raw(b[:len(b)-2])
			require.NoError(t, e.c.CloseWrite())
			e.expectGoodbye(nodewire.CodeProtocol)
		}, counted{ended: nodewire.CodeProtocol}},
		{"malformed hello", func(t *testing.T, f *fixture) {
			e := f.dial()
			e.raw(frame(nodewire.TypeHello, 0, 1, []byte{1, 0, 200, 0, 'x'})) // an engine name longer than the body
			e.expectGoodbye(nodewire.CodeProtocol)
		}, counted{ended: nodewire.CodeProtocol}},
		{"bytes left over", func(t *testing.T, f *fixture) {
			e := f.helloed()
			e.raw(frame(nodewire.TypeStats, 0, 9, []byte{0}))
			e.expectGoodbye(nodewire.CodeProtocol)
		}, counted{ended: nodewire.CodeProtocol}},
		{"unknown version", func(t *testing.T, f *fixture) {
			e := f.dial()
			req := e.send(&nodewire.Hello{Version: nodewire.Version + 1, Engine: "future"})
			e.expectRefused(req, nodewire.CodeVersion, "hello.version")
			e.expectGoodbye(nodewire.CodeVersion)
		}, counted{refused: nodewire.CodeVersion, ended: nodewire.CodeVersion}},
		{"a scope that is no scope's encoding", func(t *testing.T, f *fixture) {
			e := f.dial()
			req := e.send(&nodewire.Hello{Version: nodewire.Version, Engine: "scoped", Scope: "tenant-a"})
			e.expectRefused(req, nodewire.CodeBadScope, "hello.scope")
			e.expectGoodbye(nodewire.CodeBadScope)
		}, counted{refused: nodewire.CodeBadScope, ended: nodewire.CodeBadScope}},
		{"unknown type", func(t *testing.T, f *fixture) {
			e := f.helloed()
			e.raw(frame(0x3E, 0, 5, nil))
			e.expectGoodbye(nodewire.CodeProtocol)
		}, counted{ended: nodewire.CodeProtocol}},
		{"flags set", func(t *testing.T, f *fixture) {
			e := f.helloed()
			e.raw(frame(nodewire.TypeStats, 0x0100, 5, nil))
			e.expectGoodbye(nodewire.CodeProtocol)
		}, counted{ended: nodewire.CodeProtocol}},
		{"request id 0", func(t *testing.T, f *fixture) {
			e := f.helloed()
			e.raw(frame(nodewire.TypeStats, 0, 0, nil))
			e.expectGoodbye(nodewire.CodeProtocol)
		}, counted{ended: nodewire.CodeProtocol}},
		{"request before hello", func(t *testing.T, f *fixture) {
			e := f.dial()
			e.send(&nodewire.Stats{})
			e.expectGoodbye(nodewire.CodeProtocol)
		}, counted{ended: nodewire.CodeProtocol}},
		{"a node's message", func(t *testing.T, f *fixture) {
			e := f.helloed()
			e.send(&nodewire.Returned{})
			e.expectGoodbye(nodewire.CodeProtocol)
		}, counted{ended: nodewire.CodeProtocol}},
		{"second hello", func(t *testing.T, f *fixture) {
			e := f.helloed()
			req := e.send(&nodewire.Hello{Version: nodewire.Version, Engine: "again"})
			e.expectRefused(req, nodewire.CodeProtocol, "hello")
		}, counted{refused: nodewire.CodeProtocol}},
		{"oversize frame", func(t *testing.T, f *fixture) {
			e := f.helloed()
			h := nodewire.Header{Len: 128<<10 + 1, Type: nodewire.TypeStats, Request: 3}
			e.raw(h.Append(nil))
			e.expectGoodbye(nodewire.CodeLimitExceeded)
		}, counted{ended: nodewire.CodeLimitExceeded}},
		{"fd on a stats", func(t *testing.T, f *fixture) {
			e := f.helloed()
			e.raw(frame(nodewire.TypeStats, 0, 4, nil), pipeFD(t))
			e.expectGoodbye(nodewire.CodeProtocol)
		}, counted{ended: nodewire.CodeProtocol}},
		{"lend without an fd", func(t *testing.T, f *fixture) {
			e := f.helloed()
			e.raw(frame(nodewire.TypeLend, 0, 4, body(&nodewire.Lend{SlotBytes: 64, SlotCount: 1, Regions: 1})))
			e.expectRefused(4, nodewire.CodeBadLend, "lend.fd")
		}, counted{refused: nodewire.CodeBadLend}},
		{"lend with two fds", func(t *testing.T, f *fixture) {
			e := f.helloed()
			m := newMemfd(t, 64, 1, 1, 0, unix.F_SEAL_SHRINK)
			e.raw(frame(nodewire.TypeLend, 0, 4, body(m.lendMsg())), m.fd, m.fd)
			e.expectGoodbye(nodewire.CodeProtocol)
		}, counted{ended: nodewire.CodeProtocol}},
		{"a pipe lent", func(t *testing.T, f *fixture) {
			e := f.helloed()
			req := e.sendFD(&nodewire.Lend{SlotBytes: 64, SlotCount: 1, Regions: 1}, pipeFD(t))
			e.expectRefused(req, nodewire.CodeBadLend, "lend.fd")
		}, counted{refused: nodewire.CodeBadLend}},
		{"a regular file lent", func(t *testing.T, f *fixture) {
			e := f.helloed()
			req := e.sendFD(&nodewire.Lend{SlotBytes: 64, SlotCount: 1, Regions: 1}, fileFD(t, stride))
			e.expectRefused(req, nodewire.CodeBadLend, "lend.fd")
		}, counted{refused: nodewire.CodeBadLend}},
		{"an unsealed memfd", func(t *testing.T, f *fixture) {
			e := f.helloed()
			m := newMemfd(t, 64, 1, 1, 0, 0)
			req := e.sendFD(m.lendMsg(), m.fd)
			e.expectRefused(req, nodewire.CodeBadLend, "lend.fd")
		}, counted{refused: nodewire.CodeBadLend}},
		{"a memfd sealed against writing", func(t *testing.T, f *fixture) {
			e := f.helloed()
			m := newMemfd(t, 64, 1, 1, 0, unix.F_SEAL_SHRINK)
			unix.Munmap(m.mem) // a shared writable mapping forbids the write seal
			m.mem = nil
			_, err := unix.FcntlInt(uintptr(m.fd), unix.F_ADD_SEALS, unix.F_SEAL_WRITE)
			require.NoError(t, err)
			req := e.sendFD(m.lendMsg(), m.fd)
			e.expectRefused(req, nodewire.CodeBadLend, "lend.fd")
		}, counted{refused: nodewire.CodeBadLend}},
		{"geometry larger than the file", func(t *testing.T, f *fixture) {
			e := f.helloed()
			m := newMemfd(t, 4096, 1, 2, stride, unix.F_SEAL_SHRINK) // two regions' geometry, one region's file
			req := e.sendFD(m.lendMsg(), m.fd)
			e.expectRefused(req, nodewire.CodeBadLend, "lend.regions")
		}, counted{refused: nodewire.CodeBadLend}},
		{"no slot bytes", func(t *testing.T, f *fixture) {
			e := f.helloed()
			m := newMemfd(t, 64, 1, 1, 0, unix.F_SEAL_SHRINK)
			req := e.sendFD(&nodewire.Lend{SlotBytes: 0, SlotCount: 1, Regions: 1}, m.fd)
			e.expectRefused(req, nodewire.CodeBadLend, "lend.slot_bytes")
		}, counted{refused: nodewire.CodeBadLend}},
		{"slot bytes overflow", func(t *testing.T, f *fixture) {
			e := f.helloed()
			m := newMemfd(t, 64, 1, 1, 0, unix.F_SEAL_SHRINK)
			req := e.sendFD(&nodewire.Lend{SlotBytes: 1 << 62, SlotCount: 1 << 20, Regions: 1}, m.fd)
			e.expectRefused(req, nodewire.CodeBadLend, "lend.slot_bytes")
		}, counted{refused: nodewire.CodeBadLend}},
		{"no regions", func(t *testing.T, f *fixture) {
			e := f.helloed()
			m := newMemfd(t, 64, 1, 1, 0, unix.F_SEAL_SHRINK)
			req := e.sendFD(&nodewire.Lend{SlotBytes: 64, SlotCount: 1, Regions: 0}, m.fd)
			e.expectRefused(req, nodewire.CodeBadLend, "lend.regions")
		}, counted{refused: nodewire.CodeBadLend}},
		{"regions over the limit", func(t *testing.T, f *fixture) {
			e := f.helloed()
			m := newMemfd(t, 64, 1, 5, 0, unix.F_SEAL_SHRINK)
			req := e.sendFD(m.lendMsg(), m.fd)
			e.expectRefused(req, nodewire.CodeLimitExceeded, "lend.regions")
		}, counted{refused: nodewire.CodeLimitExceeded}},
		{"lend bytes over the limit", func(t *testing.T, f *fixture) {
			e := f.helloed()
			e.lend(1<<18, 3, 1)                                  // 768 KiB of the 1 MiB
			m := newMemfd(t, 1<<18, 2, 1, 0, unix.F_SEAL_SHRINK) // 512 KiB more
			req := e.sendFD(m.lendMsg(), m.fd)
			e.expectRefused(req, nodewire.CodeLimitExceeded, "lend.bytes")
		}, counted{refused: nodewire.CodeLimitExceeded}},
		{"unknown lend", func(t *testing.T, f *fixture) {
			e := f.helloed()
			req := e.send(&nodewire.Transfer{Dir: contract.PutDir, Lend: 7, Groups: []nodewire.Group{{Slots: []uint32{0}, Names: names("u", 1)}}})
			e.expectRefused(req, nodewire.CodeUnknownLend, "publish.lend")
		}, counted{refused: nodewire.CodeUnknownLend}},
		{"region out of range", func(t *testing.T, f *fixture) {
			e := f.helloed()
			id, _ := e.lend(64, 4, 2)
			req := e.send(&nodewire.Transfer{Dir: contract.PutDir, Lend: id, Groups: []nodewire.Group{{Region: 2, Slots: []uint32{0}, Names: names("r", 1)}}})
			e.expectRefused(req, nodewire.CodeOutOfRange, "publish.groups[0].region")
		}, counted{refused: nodewire.CodeOutOfRange}},
		{"slot out of range", func(t *testing.T, f *fixture) {
			e := f.helloed()
			id, _ := e.lend(64, 4, 1)
			req := e.send(&nodewire.Transfer{Dir: contract.GetDir, Lend: id, Groups: []nodewire.Group{{Slots: []uint32{0, 4}, Names: names("s", 2)}}})
			e.expectRefused(req, nodewire.CodeOutOfRange, "fetch.groups[0].slots[1]")
		}, counted{refused: nodewire.CodeOutOfRange}},
		{"a fetch naming one slot twice", func(t *testing.T, f *fixture) {
			e := f.helloed()
			id, _ := e.lend(64, 4, 1)
			req := e.send(&nodewire.Transfer{Dir: contract.GetDir, Lend: id, Groups: []nodewire.Group{{Slots: []uint32{1, 1}, Names: names("d", 2)}}})
			e.expectRefused(req, nodewire.CodeOutOfRange, "fetch.groups[0].slots[1]")
		}, counted{refused: nodewire.CodeOutOfRange}},
		{"a name too long", func(t *testing.T, f *fixture) {
			e := f.helloed()
			id, _ := e.lend(64, 4, 1)
			req := e.send(&nodewire.Transfer{Dir: contract.PutDir, Lend: id, Groups: []nodewire.Group{{Slots: []uint32{0, 1}, Names: [][]byte{[]byte("ok"), bytes.Repeat([]byte("n"), 513)}}}})
			e.expectRefused(req, nodewire.CodeBadNames, "publish.groups[0].names[1]")
		}, counted{refused: nodewire.CodeBadNames}},
		{"an empty name", func(t *testing.T, f *fixture) {
			e := f.helloed()
			id, _ := e.lend(64, 4, 1)
			e.send(&nodewire.Transfer{Dir: contract.PutDir, Lend: id, Groups: []nodewire.Group{{Slots: []uint32{0, 1}, Names: [][]byte{[]byte("ok"), {}}}}})
			e.expectGoodbye(nodewire.CodeBadNames)
		}, counted{ended: nodewire.CodeBadNames}},
		{"names fewer than slots", func(t *testing.T, f *fixture) {
			e := f.helloed()
			id, _ := e.lend(64, 4, 1)
			e.send(&nodewire.Transfer{Dir: contract.PutDir, Lend: id, Groups: []nodewire.Group{{Slots: []uint32{0, 1}, Names: names("f", 1)}}})
			e.expectGoodbye(nodewire.CodeBadNames)
		}, counted{ended: nodewire.CodeBadNames}},
		{"rows over the limit", func(t *testing.T, f *fixture) {
			e := f.helloed()
			id, _ := e.lend(64, 65, 1)
			req := e.send(&nodewire.Transfer{Dir: contract.PutDir, Lend: id, Groups: []nodewire.Group{{Slots: seq(65), Names: names("many", 65)}}})
			e.expectRefused(req, nodewire.CodeLimitExceeded, "publish.rows")
		}, counted{refused: nodewire.CodeLimitExceeded}},
		{"a lookup name too long", func(t *testing.T, f *fixture) {
			e := f.helloed()
			req := e.send(&nodewire.Lookup{Groups: [][][]byte{names("l", 2), {bytes.Repeat([]byte("n"), 513)}}})
			e.expectRefused(req, nodewire.CodeBadNames, "lookup.groups[1].names[0]")
		}, counted{refused: nodewire.CodeBadNames}},
		{"a lookup over the rows limit", func(t *testing.T, f *fixture) {
			e := f.helloed()
			req := e.send(&nodewire.Lookup{Groups: [][][]byte{names("l", 40), names("m", 40)}})
			e.expectRefused(req, nodewire.CodeLimitExceeded, "lookup.rows")
		}, counted{refused: nodewire.CodeLimitExceeded}},
		{"return of an unknown lend", func(t *testing.T, f *fixture) {
			e := f.helloed()
			req := e.send(&nodewire.Return{Lend: 3})
			e.expectRefused(req, nodewire.CodeUnknownLend, "return.lend")
		}, counted{refused: nodewire.CodeUnknownLend}},
		{"a flood of attempts", func(t *testing.T, f *fixture) {
			e := f.helloed()
			id, _ := e.lend(64, 8, 1)
			flood := names("flood", 5)
			keys := make([]string, len(flood))
			for i, n := range flood {
				keys[i] = f.key(n)
			}
			gate := f.store.HoldTransfers(memdrv.PutDir, keys...)
			defer gate.Release()
			var reqs []uint64
			for i := range 4 {
				reqs = append(reqs, e.transfer(contract.PutDir, id, 0, []uint32{uint32(i)}, flood[i:i+1]))
			}
			ctx, cancel := patience.For(t).Context(context.Background())
			defer cancel()
			require.NoError(t, gate.Held(ctx))
			req := e.send(&nodewire.Transfer{Dir: contract.PutDir, Lend: id, Groups: []nodewire.Group{{Slots: []uint32{4}, Names: flood[4:]}}})
			e.expectRefused(req, nodewire.CodeLimitExceeded, "attempts")
			req = e.send(&nodewire.Lookup{Groups: [][][]byte{flood}})
			e.expectRefused(req, nodewire.CodeLimitExceeded, "attempts")
			f.roundTrip("while-flooded") // other engines go on while these hold the store
			gate.Release()
			for _, out := range e.settleAll(reqs...) {
				require.Equal(t, []contract.RowStatus{contract.Ready}, out.Rows)
			}
		}, counted{refused: nodewire.CodeLimitExceeded, times: 2}},
		{"a request id in flight used again", func(t *testing.T, f *fixture) {
			e := f.helloed()
			id, _ := e.lend(64, 8, 1)
			again := names("again", 2)
			gate := f.store.HoldTransfers(memdrv.PutDir, f.key(again[0]))
			defer gate.Release()
			first := e.transfer(contract.PutDir, id, 0, []uint32{0}, again[:1])
			frameBody := body(&nodewire.Transfer{Dir: contract.PutDir, Lend: id, Groups: []nodewire.Group{{Slots: []uint32{1}, Names: again[1:]}}})
			e.raw(frame(nodewire.TypePublish, 0, first, frameBody))
			e.expectRefused(first, nodewire.CodeProtocol, "header.request")
			gate.Release()
			e.settle(first)
		}, counted{refused: nodewire.CodeProtocol}},
	}
	// One engine stays attached through every case: its session must
	// never notice the others.
	steady, _ := f.attach("steady")
	steadyLend, steadyMem := steady.lend(256, 2, 1)
	for i, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			before := f.node.Stats()
			f.t, steady.t = t, t
			c.run(t, f)
			after := f.waitNode("the case's count", func(s Stats) bool {
				return (c.count.refused == 0 || s.Refusals[c.count.refused] > before.Refusals[c.count.refused]) &&
					(c.count.ended == 0 || s.Ended[c.count.ended] > before.Ended[c.count.ended])
			})
			if c.count.refused != 0 {
				require.Equal(t, before.Refusals[c.count.refused]+int64(max(c.count.times, 1)), after.Refusals[c.count.refused], "refusals of %v", c.count.refused)
			}
			if c.count.ended != 0 {
				require.Equal(t, before.Ended[c.count.ended]+1, after.Ended[c.count.ended], "sessions ended with %v", c.count.ended)
			}
			f.roundTrip(c.name)
			name := names(fmt.Sprintf("steady-%d", i), 1)
			copy(steadyMem.slot(0, 0), name[0])
			require.Empty(t, steady.settle(steady.transfer(contract.PutDir, steadyLend, 0, []uint32{0}, name)).Fault)
			require.Empty(t, steady.settle(steady.transfer(contract.GetDir, steadyLend, 0, []uint32{1}, name)).Fault)
			require.Equal(t, steadyMem.slot(0, 0), steadyMem.slot(0, 1))
		})
	}
}
