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
//
// # Equivalent mutants
//
// go run mage.go mutate (mutation testing) counts these mutants as
// equivalent, not lived: nothing observable differs, so no test can
// kill them.
//
//   - `caps.go` in `RowsPerCall`: `int(byBytes) < rows` (CONDITIONALS_BOUNDARY):
//     where the two are equal both branches return the same number.
//   - `cut.go` in `Reset`: `c.limit < longest` (CONDITIONALS_BOUNDARY):
//     where they are equal, longest already holds c.limit.
//   - `cut.go` in `Next`: `n-c.start > s.longest` (CONDITIONALS_BOUNDARY):
//     where they are equal, c.start+s.longest is n, which last holds.
//   - `check.go` in `repeats`: `return -1, false` (ARITHMETIC_BASE, INVERT_NEGATIVES):
//     the row returned with false is never read (Check names the earlier
//     row only for a repeat), so -1 turned into 1 changes nothing.
//   - `nameset.go` in `repeats`: `return -1, false` (ARITHMETIC_BASE, INVERT_NEGATIVES):
//     the same, for the table's answer (Checker.repeats and Cutter.Next
//     read the row only with true).
//   - `nameset.go` in `place`: `return -1, false` (ARITHMETIC_BASE, INVERT_NEGATIVES):
//     the same, for one lookup.
//   - `nameset.go` in `tableSize`: `size < 2*longest` (CONDITIONALS_BOUNDARY):
//     with <= a window length whose double is a power of two gets a table
//     twice as large: lower load, the same answers, and still within the
//     16 to 32 bytes per row [Cut] documents.
//   - `nameset.go` in `repeats`: `i-s.from < linearRows` (CONDITIONALS_BOUNDARY):
//     with <= one more row is scanned before the table takes over; the
//     table then indexes every row of the window from s.indexed, which
//     the scan left at the window's start, so it answers the same.
//   - `nameset.go` in `repeats`: `s.indexed++` (INCREMENT_DECREMENT): with
//     -- the next lookup indexes rows i-1 and i again; each finds its own
//     entry and writes nothing, so the table and the answers are the same.
//   - `nameset.go` in `place`: `(p + 1) & mask` (ARITHMETIC_BASE): probing
//     backwards instead of forwards: lookups and inserts follow the same
//     sequence, which still visits every slot before it wraps, and a probe
//     still stops at the first empty or stale slot, so the answers are the
//     same.
package rowbatch
