package mooncakedrv

import (
	"crypto/sha256"
	"encoding/binary"
	"log/slog"
	"testing"

	"github.com/kvshare/kvshare/contract"
	"github.com/kvshare/kvshare/keys"
	"github.com/kvshare/kvshare/mooncakesdk/fakesdk"
)

// BenchmarkAdmission is what admitting a 4096-row get costs, for
// 32-byte names (block hashes) in parts of 256, with a keys.Stem and
// with another key maker: the batch's check, every key built once, the
// store's NUL check of every key, the parts queued. The workers are
// paused and the rows cancelled, so no row reaches the store.
func BenchmarkAdmission(b *testing.B) {
	store := fakesdk.New(fakesdk.Options{})
	d, err := New(store.Client(), Config{Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		b.Fatal(err)
	}
	const rows = 4096
	mem := newMemory(b, rows, 4096)
	if _, err := d.Register(mem.region); err != nil {
		b.Fatal(err)
	}
	stem, _ := keys.NewStem("kvshare/bench")
	batch := contract.RowBatch{Keys: stem, Rows: make([]contract.Row, rows)}
	for i := range batch.Rows {
		var seed [8]byte
		binary.LittleEndian.PutUint64(seed[:], uint64(i))
		h := sha256.Sum256(seed[:])
		batch.Rows[i] = contract.Row{Name: h[:], Spans: []contract.Span{mem.region.Slot(i)}}
	}
	other := batch
	other.Keys = otherKeys{stem}
	resume := d.Pause()
	defer resume()
	for _, c := range []struct {
		name  string
		batch contract.RowBatch
	}{{"stem", batch}, {"other-keys", other}} {
		b.Run(c.name, func(b *testing.B) {
			for b.Loop() {
				op, err := d.Get(c.batch, nil, nil)
				if err != nil {
					b.Fatal(err)
				}
				op.Cancel()
			}
		})
	}
}

// otherKeys makes the keys a keys.Stem makes without being one.
type otherKeys struct{ s keys.Stem }

func (k otherKeys) AppendKey(dst, name []byte) []byte { return k.s.AppendKey(dst, name) }
func (k otherKeys) KeyLen(n int) int                  { return k.s.KeyLen(n) }
