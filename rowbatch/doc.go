// Package rowbatch owns the two rules about the shape of a driver call:
// how the backend cuts a group of rows into calls ([Cut]), and what a
// driver admits as a call ([Check]). It imports only contract; so the
// backend, every driver and the conformance suite apply the same rules
// from the same code.
//
// # Cutting
//
// A group of a view is a run of rows in one region, each row a whole
// slot, so every row of a group has the same length. [Cut] turns the
// group's names into calls, each a range of its rows ([Call]), lazily:
// breaking out of the range stops the cutting. A [Cutter] does the same
// one call at a time, keeping its table from one group to the next. Cut
// never fails and never panics, and promises:
//
//   - Every row lands in exactly one call, and calls come in row order,
//     each starting where the previous one ended.
//   - No call carries a name twice (compared byte for byte): a row whose
//     name the call already holds starts the next call.
//   - No call has more than [Caps.MaxRows] rows or more than
//     [Caps.MaxBytes] bytes, except that a single row longer than the
//     byte cap goes alone. A cap of zero or less bounds nothing.
//   - A call ends only because its next row would break a rule, or the
//     group ended; so cutting gives the fewest calls.
//
// [Caps.Tighter] combines caps from two sources (a driver's
// [contract.Capabilities.MaxRowsPerOp] and the backend's own),
// [Caps.RowsPerCall] tells a holder the most rows one call can keep
// lent, and [Caps.Validate] refuses a negative cap in a configuration.
//
// # Admission
//
// [Check] is the check a driver runs on a [contract.RowBatch] before it
// records anything: the batch has rows and a key maker; names are
// non-empty, distinct and have a key (KeyLen not 0); every row has one
// span (or, for a driver that declares MultiSpan, at least one); and
// every span has a positive length and lies wholly inside one live
// registration. A span that straddles two adjacent regions is refused.
// A [Checker] runs it with a table it keeps, allocating nothing per
// batch. Errors wrap [ErrBadBatch] and name the row, its key and the
// span. [Regions] is the registry a driver checks against: the handles
// it issued and the live list (with a generation, so a batch checked
// once need not be checked again while the list holds); [FirstRowIn]
// finds the row of a batch that keeps a region busy.
//
// Why the rules are what they are, and how repeats are found:
// docs/design/rowbatch.md.
// Examples and benchmarks: the module's README.md.
package rowbatch
