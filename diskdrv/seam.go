package diskdrv

import "github.com/kvshare/kvshare/contract"

// Op is a file operation of a row that the [Seam] is asked about.
type Op int

const (
	// Begin comes before a row touches any file: a seam that blocks
	// here holds the row inside the store call.
	Begin Op = iota
	// Write is one pwrite of a put (header or payload).
	Write
	// Sync is a put's fsync of its file.
	Sync
	// Read is one pread of a get (header or payload).
	Read
	// Look is a lookup's answer for one key.
	Look
)

// String names the operation.
func (o Op) String() string {
	return [...]string{"begin", "write", "sync", "read", "look"}[o]
}

// Fault is what a [Seam] makes of one operation. The zero Fault lets it
// run.
type Fault struct {
	// Err fails the operation with this error instead of running it
	// (syscall.ENOSPC, syscall.EIO).
	Err error
	// Short runs a Write or Read over half its bytes, rounded down to
	// whole pages (what a device returns when it stops at a block
	// boundary), and reports that count with no error.
	Short bool
	// Panic makes the store call panic here, as a crashed client would.
	Panic bool
}

// Seam is asked, on the row's worker, before each operation of a row on
// key in dir (dir is GetDir for Look). It may block (a test holding the
// row) and returns the fault to stage. The store maps what follows to a
// verdict: see the package documentation. [Store.Seed] bypasses it.
type Seam func(op Op, dir contract.Direction, key string) Fault
