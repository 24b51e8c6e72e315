package contract

// Span is a run of memory: an address and a length in bytes.
type Span struct {
	Addr uintptr
	Len  int64
}

// End returns the address one past the span.
func (s Span) End() uintptr { return s.Addr + uintptr(s.Len) }

// Row is one row of a driver call: the name its store key is built from
// and the memory the object is read from (put) or written into (get). A
// driver without [Capabilities.MultiSpan] gets exactly one span per row.
//
// The name is borrowed: it stays valid and unchanged until the
// operation's access ends. A driver that needs it longer (as a map key,
// say) copies it, usually by building the key with
// [RowBatch.AppendKey] into a buffer of its own.
type Row struct {
	Name  []byte
	Spans []Span
}

// Bytes returns the total length of the row's spans.
func (r Row) Bytes() int64 {
	var n int64
	for _, s := range r.Spans {
		n += s.Len
	}
	return n
}

// KeyMaker turns a row's name into its store key. The driver calls it,
// writing each key straight into its own buffer (a C key list, a map
// key), so that whoever submits a batch builds no key strings.
//
// A KeyMaker must be:
//   - deterministic: the same name always makes the same key;
//   - injective: two different names never make the same key, so a
//     batch whose names are distinct has distinct keys;
//   - safe for concurrent use by any number of goroutines;
//   - frugal: AppendKey allocates nothing beyond growing dst;
//   - NUL-free: no key contains a zero byte (stores take NUL-terminated
//     key lists);
//   - exact: KeyLen(len(name)) is the number of bytes AppendKey appends
//     for name.
//
// A KeyMaker may have no key for names of some lengths (too long, say):
// KeyLen then returns 0 and AppendKey appends nothing. A driver's
// admission check refuses such a row. No driver may assume anything else
// of the key's grammar: the conformance suite uses a key maker of its own.
type KeyMaker interface {
	// AppendKey appends the key of name to dst and returns the extended
	// slice. It only reads name.
	AppendKey(dst, name []byte) []byte
	// KeyLen returns the length of the key of a name of nameLen bytes,
	// or 0 when names of that length have no key.
	KeyLen(nameLen int) int
}

// RowBatch is one driver call: the key maker and the rows, in order. It
// never carries the same name twice (stores mishandle a key repeated in
// one call), and every span lies inside a region the driver registered.
// The driver may keep the batch until the operation's access ends and
// must not modify it.
type RowBatch struct {
	Keys KeyMaker
	Rows []Row
}

// Len returns the number of rows.
func (b RowBatch) Len() int { return len(b.Rows) }

// Bytes returns the total length of every row's spans.
func (b RowBatch) Bytes() int64 {
	var n int64
	for _, r := range b.Rows {
		n += r.Bytes()
	}
	return n
}

// AppendKey appends the store key of row i to dst and returns the
// extended slice; it allocates only to grow dst.
func (b RowBatch) AppendKey(dst []byte, i int) []byte {
	return b.Keys.AppendKey(dst, b.Rows[i].Name)
}

// Key returns the store key of row i as a string. It allocates: use it
// for errors, logs and tests, and [RowBatch.AppendKey] on a data path.
func (b RowBatch) Key(i int) string {
	name := b.Rows[i].Name
	return string(b.Keys.AppendKey(make([]byte, 0, b.Keys.KeyLen(len(name))), name))
}
