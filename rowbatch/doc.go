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
// keys into calls, each a range of the group's rows ([Call]). It promises:
//
//   - Every row lands in exactly one call. Calls come in row order, each
//     starting where the previous one ended, so a row's position in the
//     group (and through it, in the view and its outcome) is never lost.
//   - No call carries a key twice: a row whose key the call already holds
//     starts the next call. Stores mishandle a key repeated in one call,
//     and a view may name one block at two slots.
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
// records anything: the batch has rows, keys are non-empty and distinct,
// every row has one span (or, for a driver that declares MultiSpan, at
// least one), and every span has a positive length and lies wholly inside
// one live registration. A span that straddles two adjacent regions is
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
//     call. A key is compared byte for byte, the empty key included: Cut
//     cuts, Check refuses.
//   - Finding a repeated key: calls up to 8 rows are scanned (cheaper
//     than hashing keys of ~75 bytes); longer calls use an open-addressing
//     table of row indices, allocated once per range and reused by every
//     later call without clearing. BenchmarkCut reports the cost per row
//     (go test -bench Cut), on a shared 2-core builder: about 9 ns with
//     8-row calls, 21 ns with the Mooncake driver's 128-row parts, and
//     30 ns when a whole group of 4096 rows is one call; a Go map in the
//     table's place measured about 60 ns a row.
//   - Cut returns an [iter.Seq] that cuts lazily, so a backend can hand
//     each call to the driver as it is cut and stop at the first that
//     fails; breaking out of the range stops the cutting.
package rowbatch
