// Package rowbatch owns the two rules about the shape of a driver call:
// how the backend cuts a group of rows into calls ([Cut]), and what a
// driver admits as a call ([Check]). It imports only contract, so the
// backend, every driver and the conformance suite apply the same rules
// from the same code.
//
// # Cutting
//
// A group of a view is a run of rows in one region, each row a whole slot,
// so every row of a group has the same length. [Cut] turns the group's
// names into calls, each a range of the group's rows ([Call]); a
// [Cutter] does the same one call at a time, keeping its table from one
// group to the next. It promises:
//
//   - Every row lands in exactly one call. Calls come in row order, each
//     starting where the previous one ended, so a row's position in the
//     group (and through it, in the view and its outcome) is never lost.
//   - No call carries a name twice: a row whose name the call already
//     holds starts the next call. Key makers are injective, so no call
//     carries a key twice either: stores mishandle a key repeated in one
//     call, and a view may name one block at two slots.
//   - No call has more than [Caps.MaxRows] rows or more than
//     [Caps.MaxBytes] bytes, except that a single row longer than the byte
//     cap goes alone rather than nowhere.
//   - Every call is as long as the rules allow: a call ends only because
//     its next row would break one of them, or because the group ended.
//     Since any part of an allowed call is an allowed call, cutting
//     greedily also gives the fewest calls.
//
// [Caps.Tighter] combines caps from two sources (a driver's
// [contract.Capabilities.MaxRowsPerOp] and the backend's own), and
// [Caps.RowsPerCall] tells a holder the most rows, hence bytes, one call
// can keep lent.
//
// # Admission
//
// [Check] is the check a driver runs on a [contract.RowBatch] before it
// records anything: the batch has rows and a key maker, names are
// non-empty, distinct and have a key, every row has one span (or, for a
// driver that declares MultiSpan, at least one), and every span has a
// positive length and lies wholly inside one live registration. A
// [Checker] runs it with a table it keeps, allocating nothing per batch. A span that straddles two adjacent regions is
// refused even though every byte of it is registered: each registration
// is a separate grant, and a store may treat them as separate buffers.
// Errors wrap [ErrBadBatch] and name the row, its key and the span.
//
// # Decisions
//
// Where the design was silent:
//
//   - A cap that is zero or negative bounds nothing. Cut never fails and
//     never panics; [Caps.Validate] exists for configurations, which
//     should refuse a negative cap rather than read it as "none".
//   - A row length of zero or less makes the byte cap inert (such rows
//     carry no bytes). The binding's regions always have positive slots.
//   - The repeating row starts the next call; the earlier row keeps its
//     call. A name is compared byte for byte, the empty name included:
//     Cut cuts, Check refuses. Names, not keys, are compared: the key
//     maker is injective, and comparing names needs no key built.
//   - Finding a repeated name: calls up to 8 rows are scanned (cheaper
//     than hashing); longer calls use an open-addressing table of row
//     indices, allocated once per range (once per Cutter or Checker, for
//     as long as no longer call comes) and reused by every later call
//     without clearing; moving to another group clears it. BenchmarkCut
//     reports the cost per row (go test -bench Cut); the figures are in
//     BENCHMARKS.md.
//   - A name the batch's key maker has no key for (KeyLen 0) is refused by
//     Check: the driver would have no key to store it under.
//   - Cut returns an [iter.Seq] that cuts lazily, so a backend can hand
//     each call to the driver as it is cut and stop at the first that
//     fails; breaking out of the range stops the cutting.
package rowbatch
