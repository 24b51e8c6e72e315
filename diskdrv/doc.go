// Package diskdrv is the disk tier: a store of KV rows in a local
// directory, one file per object, and a driver on drivekit over it.
//
// [Open] takes the directory (its LOCK file: one process at a time),
// removes the temporary files of puts a killed process cut, and builds
// the index from the object files, checking each header; objects
// persist across restarts. A key maps to its file through its SHA-256
// (keys are longer than a file name may be); the key is kept in the
// header page and checked on every read. A put writes a temporary file
// with one pwritev (the header page, then the lent memory), syncs it
// as [Durability] says, and renames it over the object's name: an
// object is whole or absent, never torn. A get reads the header page
// and the payload, straight into the lent memory, in one preadv. Rows whose spans are page-aligned in address and length move
// with O_DIRECT when the file system takes it ([DirectIOWorks]); the
// rest through the page cache. [Options.Capacity] bounds the bytes on
// disk; [Options.Evict] makes room by removing the least recently used
// objects, else a put beyond it is Declined.
//
// Every transfer is a pwrite or pread on the worker that runs the
// store call, so the call's return proves access ended: no row is ever
// Unprovable, and there is nothing to tear down. The verdicts:
//
//	put of a key that holds an object     Ready (the first object stays)
//	put or get of a key being written     NotReady
//	put beyond the capacity, no eviction  Declined
//	put that meets ENOSPC or EDQUOT       Declined, nothing visible
//	put that meets EIO, or no progress    Fault, nothing visible
//	short write or read                   goes on from where it stopped
//	get of an absent or evicted key       Miss
//	get of an object of another size      Fault, nothing written
//	get of a header of another key        Fault (the slot holds its bytes)
//	get that meets EIO                    Fault, the slot may hold part
//	get of a file ending early            Fault, the object dropped
//	a panic in the store call             Fault (the kit's Broke)
//	every verdict                         access Ended at the return
//
// Lookups answer from the index in memory: Present, InFlight for a key
// being written, Absent. [Seam] is where tests stage disk faults.
// Why one file per object, and the order of syncs and renames that a
// power loss cannot tear: docs/design/diskdrv.md.
package diskdrv
