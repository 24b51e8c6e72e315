// Package memdrv is kvshare's in-process store and its drivers: the
// embedded default store of the main job, and the driver every other
// module's tests run against. Its scenario hooks make the store misbehave
// on purpose; package broken builds on it drivers that each break one rule.
//
// [Memory] is host memory outside the Go heap (anonymous mmap), laid out
// as one region's slots. [Store] holds complete objects by key, shared by
// any number of drivers: on the Go heap ([NewStore]), or bounded
// ([NewBoundedStore]: a cache taken up front outside the Go heap in
// chunks of one size, the least recently used evicted for a put, never
// an object being read or written). [Driver] is a [contract.Driver] over
// a Store, [TogetherDriver] adds [contract.RegionsTogether]; a row is
// stored under the key the batch's key maker builds from its name; both
// run on [drivekit], which keeps the contract's machinery.
//
// A memdrv driver keeps every driver rule of package contract:
//
//   - Admission is all or nothing: Put and Get check the driver's state,
//     the direction, the hint, the row cap, the batch ([rowbatch.Check]
//     against the live registrations) and every key's length, and either
//     fail with an error wrapping [contract.ErrDriverRejected], having
//     recorded nothing, or admit. After admission every failure is a row
//     status.
//   - Poll appends the statuses to the caller's dst[:0], under the
//     driver's lock, and allocates nothing once dst has room; the driver
//     never keeps dst.
//   - A put never overwrites: a key holding a complete object is Ready (the
//     first object stays); a key being written, by another writer or a put
//     of this driver, is NotReady; an object the store cannot make room
//     for is Declined. A get of an object of the row's size is Ready; a shorter
//     one lands in the head of the row's spans and is a Fault; a longer one
//     is a Fault with nothing written; an absent key is Miss (Fault with
//     nothing written, with [Options.NoAbsentIsMiss]); a key being written
//     is NotReady. No byte outside a row's spans is ever written, and an
//     object is visible whole or not at all.
//   - A row's status is recorded only after its worker is done with the
//     memory, and access leaves Open with the last row's status. onChange
//     runs on a driver goroutine, outside the driver's lock, before that
//     goroutine counts itself finished.
//   - A region stays registered while an Open or Unprovable operation has a
//     span in it ([ErrRegionBusy]). [Memory.Free] refuses memory a live
//     memdrv registration covers ([ErrMemoryLent]), so memory an unprovable
//     operation pins stays mapped for the life of the process.
//
// The scenario hooks, on *Driver: [Driver.Hold], [Driver.HoldKeys],
// [Driver.Crash], [Driver.FailReads], [Driver.UnprovableGets] (its
// transfers land at [Driver.FinishStrays] unless [Driver.Recycle] ended
// them), [Driver.Pause], [Driver.CompleteAfterCancel],
// [Driver.FailNextRegister] and [TogetherDriver.FailNextRegistration];
// on the Store, [Store.BeginWrite], [Store.HoldTransfers],
// [Store.SetCapacity] and [Store.SetFull].
//
// It refuses Put, Get and registrations after Drain or Close; rows in
// undeclared directions; hints without Hints; more rows than MaxRowsPerOp;
// more than one span per row without MultiSpan; Device regions without
// DeviceMemory; handles it never issued; and Close before a Drain that
// returned true or with a registration left.
//
// Hooks, options: README.md; proofs, decisions: docs/design/memdrv.md.
package memdrv
