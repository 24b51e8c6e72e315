package contract

// Span is a run of memory: an address and a length in bytes.
type Span struct {
	Addr uintptr
	Len  int64
}

// End returns the address one past the span.
func (s Span) End() uintptr { return s.Addr + uintptr(s.Len) }

// Row is one row of a driver call: its store key and the memory the
// object is read from (put) or written into (get). A driver without
// [Capabilities.MultiSpan] gets exactly one span per row.
type Row struct {
	Key   string
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

// RowBatch is one driver call: rows in order. It never carries the same
// key twice (stores mishandle a key repeated in one call), and every span
// lies inside a region the driver registered. The driver may keep the
// batch until the operation's access ends and must not modify it.
type RowBatch struct {
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
