package conformance

import "fmt"

// checkNamesAfterEnd moves a two-row operation in each direction the
// driver serves and, once their access ended, goes on calling the driver
// (Poll, Cancel, a Drain, Poll again): every one is a chance for a driver
// that reads a name late (a retry, a log line or a ledger built after the
// fact) to hand the key maker a name the suite has written over (see
// nameBook). Every check watches the names it lent the same way (most go
// on to other operations, too); this one makes the calls after the end
// on purpose.
func checkNamesAfterEnd(b *bench) {
	n := b.capRows(2)
	var ws []*watch
	for _, dir := range b.dirs() {
		m := b.seeded(dir, b.region(n), seq(n), fmt.Sprintf("%v-borrowed", dir))
		w := b.admit(dir, m.batch, nil, nil)
		w.settle()
		ws = append(ws, w)
	}
	for _, w := range ws {
		w.poll()
		if ok, p := b.call("Cancel", w.operation().Cancel); ok && p != nil {
			b.r.Errorf("%s: Cancel of an ended operation panicked: %v", w.label, p)
		}
	}
	if !b.drain(false) {
		b.r.Errorf("Drain returned false with every operation settled")
	}
	for _, w := range ws {
		w.poll()
	}
}
