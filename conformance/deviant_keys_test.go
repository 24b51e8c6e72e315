package conformance

import (
	"encoding/hex"

	"github.com/kvshare/kvshare/contract"
	"github.com/kvshare/kvshare/memdrv"
)

// Key deviations built over memdrv: a driver that builds keys its own
// way instead of through the batch's key maker, and one that admits a
// batch with no key maker by making keys of its own.

// hexKeys makes the key of a name its lowercase hex, the grammar of
// keys.Stem without the prefix.
type hexKeys struct{}

func (hexKeys) AppendKey(dst, name []byte) []byte { return hex.AppendEncode(dst, name) }
func (hexKeys) KeyLen(n int) int                  { return 2 * n }

// nameKeys makes the key of a name the name itself.
type nameKeys struct{}

func (nameKeys) AppendKey(dst, name []byte) []byte { return append(dst, name...) }
func (nameKeys) KeyLen(n int) int                  { return n }

// ownKeys stores and reads every row under a key of its own making,
// ignoring the batch's key maker: its own round trips work.
type ownKeys struct {
	*memdrv.Driver
	keys contract.KeyMaker
}

func (d ownKeys) Put(b contract.RowBatch, onChange func()) (contract.Operation, error) {
	b.Keys = d.keys
	return d.Driver.Put(b, onChange)
}

func (d ownKeys) Get(b contract.RowBatch, h contract.Hint, onChange func()) (contract.Operation, error) {
	b.Keys = d.keys
	return d.Driver.Get(b, h, onChange)
}

// keyCatches: keys of a driver's own making (hex of the name, the name
// alone), and keys made up for a batch with no key maker.
func keyCatches() []catch {
	var out []catch
	for _, c := range []struct {
		name string
		keys contract.KeyMaker
	}{
		{"hex", hexKeys{}},
		{"name", nameKeys{}},
	} {
		h := deviantHarness(func(d *memdrv.Driver) contract.Driver { return ownKeys{d, c.keys} }, memdrv.Options{})
		control := memHarness(memdrv.Options{}, false)
		for _, k := range []struct{ check, violation string }{
			{"exact-key/put", "ended ready, but the store holds no object under its key"},
			{"exact-key/get", "ended miss, want ready: each object is stored, whole, under exactly the key the batch's key maker builds"},
			{"put-round-trip", "ended ready, but the store's object under its key"},
		} {
			out = append(out, catch{name: "own-keys/" + c.name + "/" + k.check, deviant: h, control: control, check: k.check, violation: k.violation})
		}
	}
	h := deviantHarness(func(d *memdrv.Driver) contract.Driver { return defaultKeys{d} }, memdrv.Options{})
	return append(out, catch{
		name: "default-keys", deviant: h, control: memHarness(memdrv.Options{}, false), check: "admission",
		violation: "admitted, want refused with ErrDriverRejected: no key maker (Keys nil): a bad batch is refused",
	})
}

// defaultKeys admits a batch with no key maker, making hex keys for it.
type defaultKeys struct{ *memdrv.Driver }

func (d defaultKeys) Put(b contract.RowBatch, onChange func()) (contract.Operation, error) {
	if b.Keys == nil {
		b.Keys = hexKeys{}
	}
	return d.Driver.Put(b, onChange)
}

func (d defaultKeys) Get(b contract.RowBatch, h contract.Hint, onChange func()) (contract.Operation, error) {
	if b.Keys == nil {
		b.Keys = hexKeys{}
	}
	return d.Driver.Get(b, h, onChange)
}
