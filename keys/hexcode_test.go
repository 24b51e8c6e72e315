package keys

import (
	"encoding/hex"
	"testing"
)

func TestAppendHexMatchesEncodingHex(t *testing.T) {
	all := make([]byte, 256)
	for i := range all {
		all[i] = byte(i)
	}
	for _, src := range [][]byte{nil, {0}, {0xff}, all, all[7:40]} {
		got := string(appendHex([]byte("p/"), src))
		want := "p/" + hex.EncodeToString(src)
		if got != want {
			t.Fatalf("appendHex(%x) = %q, want %q", src, got, want)
		}
	}
}

func FuzzAppendHex(f *testing.F) {
	f.Add([]byte("block"), 0)
	f.Add([]byte{0, 0xff, 0x10}, 3)
	f.Fuzz(func(t *testing.T, src []byte, room int) {
		room = max(0, min(room, 64))
		dst := make([]byte, 1, 1+room)
		got := appendHex(dst, src)
		if want := "\x00" + hex.EncodeToString(src); string(got) != want {
			t.Fatalf("appendHex(%x) = %q, want %q", src, got, want)
		}
	})
}

func BenchmarkAppendHex(b *testing.B) {
	name := make([]byte, 32)
	buf := make([]byte, 0, 64)
	b.Run("table", func(b *testing.B) {
		for b.Loop() {
			buf = appendHex(buf[:0], name)
		}
	})
	b.Run("encoding-hex", func(b *testing.B) {
		for b.Loop() {
			buf = hex.AppendEncode(buf[:0], name)
		}
	})
}
