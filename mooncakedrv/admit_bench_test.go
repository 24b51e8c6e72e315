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

// otherKeys makes the keys a keys.Stem makes without being one, so the
// admission pays its first pass over the keys.
type otherKeys struct{ s keys.Stem }

func (k otherKeys) AppendKey(dst, name []byte) []byte { return k.s.AppendKey(dst, name) }
func (k otherKeys) KeyLen(n int) int                  { return k.s.KeyLen(n) }

// BenchmarkAdmission is what a 4096-row call's admission costs before
// its first part can be queued, step by step, for 32-byte names (block
// hashes) in parts of 256: the batch's check (spans, names, repeats),
// the first pass that proves every key crosses to C (paid only by key
// makers other than keys.Stem), the first part's keys and arguments,
// and every part's (what admission built before the first part was
// queued until it queued parts one at a time).
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
	op := &operation{d: d, dir: contract.GetDir, batch: batch, rows: make([]contract.RowStatus, rows)}
	bounds := d.partBounds(batch)
	b.Run("check", func(b *testing.B) {
		for b.Loop() {
			d.mu.Lock()
			err := d.checkLocked(contract.GetDir, batch)
			d.mu.Unlock()
			if err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("keys-first-pass", func(b *testing.B) {
		for b.Loop() {
			if err := d.keysCross(other); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("first-part", func(b *testing.B) {
		for b.Loop() {
			d.releasePart(d.buildPart(op, bounds[0]))
		}
	})
	b.Run("every-part", func(b *testing.B) {
		for b.Loop() {
			for _, bd := range bounds {
				d.releasePart(d.buildPart(op, bd))
			}
		}
	})
}
