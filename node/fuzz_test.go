package node

import (
	"context"
	"io"
	"net"
	"os"
	"testing"

	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"

	"github.com/kvshare/kvshare/contract"
	"github.com/kvshare/kvshare/memdrv"
	"github.com/kvshare/kvshare/nodewire"
	"github.com/kvshare/kvshare/patience"
)

// fuzzFrames is a session's worth of frames an honest engine sends.
func fuzzFrames(t testing.TB) []byte {
	var b []byte
	add := func(req uint64, m nodewire.Message) {
		var err error
		b, err = nodewire.AppendFrame(b, req, m)
		require.NoError(t, err)
	}
	ns := names("fuzz", 2)
	add(1, &nodewire.Hello{Version: nodewire.Version, Engine: "fuzz"})
	add(2, &nodewire.Lend{SlotBytes: 512, SlotCount: 4, Regions: 2})
	add(3, &nodewire.Transfer{Dir: contract.PutDir, Lend: 1, Groups: []nodewire.Group{{Region: 1, Slots: []uint32{0, 3}, Names: ns}}})
	add(4, &nodewire.Lookup{Every: true, Groups: [][][]byte{ns}})
	add(5, &nodewire.Transfer{Dir: contract.GetDir, Lend: 1, Deadline: 1, Groups: []nodewire.Group{{Slots: []uint32{1, 2}, Names: ns}}})
	add(6, &nodewire.Cancel{Attempt: 5})
	add(7, &nodewire.Stats{})
	add(8, &nodewire.Return{Lend: 1})
	add(9, &nodewire.ClientGoodbye{Reason: "done"})
	return b
}

// FuzzSession feeds a session of the node the frames the input holds, as
// its reader would hand them over (each lend with a sealed memfd of the
// size the input's geometry asks, when it is small), and ends it: the
// node must not panic, and once the session ended nothing of its memory
// is still mapped.
func FuzzSession(f *testing.F) {
	f.Add(fuzzFrames(f))
	f.Add(fuzzFrames(f)[:40])
	f.Fuzz(func(t *testing.T, data []byte) {
		store := memdrv.NewStore()
		drv := memdrv.New(store, memdrv.Options{Workers: 2})
		n, err := New(Config{Driver: drv, Logger: quiet(t), MaxAttempts: 3, MaxRows: 16, MaxLendBytes: 1 << 20, MaxRegions: 4, OutQueue: 64})
		require.NoError(t, err)
		pair, err := unix.Socketpair(unix.AF_UNIX, unix.SOCK_STREAM|unix.SOCK_CLOEXEC, 0)
		require.NoError(t, err)
		near := os.NewFile(uintptr(pair[0]), "node")
		far := os.NewFile(uintptr(pair[1]), "engine")
		defer far.Close()
		fc, err := net.FileConn(near)
		require.NoError(t, err)
		near.Close()
		go io.Copy(io.Discard, far) // the engine reads whatever comes
		c := fc.(*net.UnixConn)
		e := n.newEngine(c, nodewire.NewConn(c), peer{pid: 1})
		written := e.startWriter()

		code, why := nodewire.Code(0), "the input ended"
		for len(data) >= nodewire.HeaderSize {
			h, err := nodewire.ParseHeader(data, n.cfg.MaxFrame)
			if err != nil || uint64(len(data)-nodewire.HeaderSize) < uint64(h.Len) {
				break
			}
			frame := data[:nodewire.HeaderSize+int(h.Len)]
			data = data[len(frame):]
			_, m, err := nodewire.DecodeFrame(frame, n.cfg.MaxFrame)
			if err != nil {
				code, why = nodewire.CodeOf(err), err.Error()
				break
			}
			fd := -1
			if l, ok := m.(*nodewire.Lend); ok {
				fd = fuzzMemfd(t, l)
			}
			var end bool
			if code, why, end = e.handle(h, m, fd); end {
				break
			}
		}
		e.end(code, why, written)

		ctx, cancel := patience.For(t).Context(context.Background())
		defer cancel()
		require.Empty(t, n.Shutdown(ctx), "memory still mapped after the session ended")
		s := n.Stats()
		require.Zero(t, s.LentBytes)
		require.Zero(t, s.Lends)
		require.True(t, drv.Drain(ctx))
		require.NoError(t, drv.Close())
	})
}

// fuzzMemfd is a sealed memfd of the lend's size when that is small
// (else of one page), for the node to check and map; the node owns it.
func fuzzMemfd(t *testing.T, l *nodewire.Lend) int {
	size, err := nodewire.LendSize(int64(min(l.SlotBytes, 1<<40)), int(l.SlotCount), int(l.Regions))
	if err != nil || size > 1<<20 {
		size = nodewire.PageSize
	}
	fd, err := unix.MemfdCreate("kvshare-fuzz", unix.MFD_CLOEXEC|unix.MFD_ALLOW_SEALING)
	require.NoError(t, err)
	require.NoError(t, unix.Ftruncate(fd, size))
	_, err = unix.FcntlInt(uintptr(fd), unix.F_ADD_SEALS, unix.F_SEAL_SHRINK)
	require.NoError(t, err)
	return fd
}

// FuzzHelloScope reads any hello scope as a node does: either it is
// refused with BadScope naming a field of the scope, or it is a scope's
// canonical text exactly (the scope it reads encodes to the same text)
// and the session's keys are made under that scope's stem and declare
// its tenant. Nothing else is possible.
func FuzzHelloScope(f *testing.F) {
	f.Add(scopeText(f, testScope()))
	f.Add("")
	f.Add("kvscope1;")
	f.Add(scopeText(f, testScope())[:40])
	f.Add("kvscope1;1:m,1:r,0:,4:fp16,0:,2:16,1:8,3:128,1:0,2:32,1:0,1:1,1:0,1:1,6:xxh3-1,0:,4:acme,")
	n, err := New(Config{Driver: memdrv.New(memdrv.NewStore(), memdrv.Options{}), Logger: quiet(f)})
	require.NoError(f, err)
	f.Fuzz(func(t *testing.T, text string) {
		sc, r := n.scopeOf(text)
		if r != nil {
			require.Equal(t, nodewire.CodeBadScope, r.code, "%v", r)
			require.Contains(t, r.field, "hello.scope")
			return
		}
		if text == "" {
			require.Equal(t, n.stem, sc.stem, "no scope: the node's own stem")
			require.Empty(t, sc.tenant)
			return
		}
		again, err := sc.scope.MarshalText()
		require.NoError(t, err)
		require.Equal(t, text, string(again), "only a canonical text is taken")
		_, scoped := sc.stem.Scope()
		require.True(t, scoped)
		require.Equal(t, sc.scope.Tenant, sc.tenant)
	})
}
