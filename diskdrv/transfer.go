package diskdrv

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"syscall"

	"golang.org/x/sys/unix"

	"github.com/kvshare/kvshare/contract"
)

// errNoProgress is a write or read that moved no byte and said no
// error: the row cannot go on.
var errNoProgress = errors.New("diskdrv: the disk moved no byte")

// row is one row's transfer: its key, its spans, the seam's hand in it.
type row struct {
	s      *Store
	dir    contract.Direction
	key    string
	spans  []contract.Span
	direct bool
	seed   bool // a Seed: the seam is not asked
}

// ask asks the seam about op; a panic it stages happens here.
func (r *row) ask(op Op) Fault {
	if r.s.o.Seam == nil || r.seed {
		return Fault{}
	}
	f := r.s.o.Seam(op, r.dir, r.key)
	if f.Panic {
		panic(fmt.Sprintf("diskdrv: staged crash at the %s of key %q", op, r.key))
	}
	return f
}

// flags opens the row's file for direct I/O when its memory is aligned.
func (r *row) flags(f int) int {
	if r.direct {
		f |= unix.O_DIRECT
	}
	return f | unix.O_CLOEXEC
}

// writeAll writes b at off, going on after short writes.
func (r *row) writeAll(fd int, b []byte, off int64) error {
	for len(b) > 0 {
		f := r.ask(Write)
		if f.Err != nil {
			return f.Err
		}
		chunk := b
		if f.Short {
			chunk = b[:len(b)/2&^(pageBytes-1)]
		}
		n, err := unix.Pwrite(fd, chunk, off)
		if err != nil {
			return err
		}
		if n == 0 {
			return errNoProgress
		}
		b, off = b[n:], off+int64(n)
	}
	return nil
}

// readAll fills b from off, going on after short reads; the end of the
// file before b is full is io.ErrUnexpectedEOF.
func (r *row) readAll(fd int, b []byte, off int64) error {
	for len(b) > 0 {
		f := r.ask(Read)
		if f.Err != nil {
			return f.Err
		}
		chunk := b
		if f.Short {
			chunk = b[:len(b)/2&^(pageBytes-1)]
			if len(chunk) == 0 {
				return errNoProgress
			}
		}
		n, err := unix.Pread(fd, chunk, off)
		if err != nil {
			return err
		}
		if n == 0 {
			return io.ErrUnexpectedEOF
		}
		b, off = b[n:], off+int64(n)
	}
	return nil
}

// put writes the row's bytes as key's object: to a temporary file,
// synced as the durability says, then renamed over the object's name.
// A key that holds an object is Ready (the first stays), one being
// written NotReady, one that does not fit Declined. A full disk
// (ENOSPC, EDQUOT) is Declined, any other failure Fault; either way the
// temporary file is removed and nothing becomes visible.
func (r *row) put() contract.RowStatus {
	e, v := r.s.reserve(r.key, rowBytes(r.spans))
	if e == nil {
		return v
	}
	path := objectPath(r.s.dir, e.name)
	tmp := path + tmpSuffix
	if err := r.write(tmp, e); err != nil {
		_ = os.Remove(tmp)
		r.s.abandon(e)
		return putVerdict(err)
	}
	if err := os.Rename(tmp, path); err != nil {
		_ = os.Remove(tmp)
		r.s.abandon(e)
		return putVerdict(err)
	}
	if r.s.o.Durability == Full {
		if err := syncDir(filepath.Dir(path)); err != nil {
			// The object is whole where it lies; only its survival of
			// a power loss is not proven. Keep it, say so.
			r.s.log.Warn("diskdrv: syncing the directory after a put", "key", r.key, "err", err)
		}
	}
	r.s.commit(e)
	return contract.Ready
}

// write writes the temporary file of e: the header page, the payload
// from the row's spans, then the sync the durability asks for.
func (r *row) write(tmp string, e *entry) error {
	fd, err := unix.Open(tmp, r.flags(unix.O_WRONLY|unix.O_CREAT|unix.O_TRUNC), 0o644)
	if err != nil {
		return err
	}
	defer unix.Close(fd)
	pp := pages.Get().(*[]byte)
	defer pages.Put(pp)
	encodeHeader(*pp, r.key, e.size)
	if err := r.writeAll(fd, *pp, 0); err != nil {
		return err
	}
	off := int64(headerBytes)
	for _, sp := range r.spans {
		if err := r.writeAll(fd, at(sp.Addr, sp.Len), off); err != nil {
			return err
		}
		off += sp.Len
	}
	if r.s.o.Durability == None {
		return nil
	}
	if f := r.ask(Sync); f.Err != nil {
		return f.Err
	}
	return unix.Fdatasync(fd)
}

// putVerdict maps a put's failure to its row's status: a full disk is
// Declined (the store refused on its own terms), the rest Fault.
func putVerdict(err error) contract.RowStatus {
	if errors.Is(err, syscall.ENOSPC) || errors.Is(err, syscall.EDQUOT) {
		return contract.Declined
	}
	return contract.Fault
}

// get reads key's object into the row's spans. No object is Miss, one
// being written NotReady. Its header must hold the key and a payload of
// exactly the row's size, else the row is Fault with nothing written. A
// failed or short read (EIO, the file ending early) is Fault, and the
// spans may hold part of the object; a file found shorter than its
// header says is dropped from the store.
func (r *row) get() contract.RowStatus {
	e, v := r.s.find(r.key)
	if e == nil {
		return v
	}
	fd, err := unix.Open(objectPath(r.s.dir, e.name), r.flags(unix.O_RDONLY), 0)
	if errors.Is(err, unix.ENOENT) {
		return contract.Miss // evicted since
	}
	if err != nil {
		r.s.log.Warn("diskdrv: opening an object", "key", r.key, "err", err)
		return contract.Fault
	}
	defer unix.Close(fd)
	pp := pages.Get().(*[]byte)
	defer pages.Put(pp)
	if err := r.readAll(fd, *pp, 0); err != nil {
		return r.failed(e, err)
	}
	key, size, err := decodeHeader(*pp)
	switch {
	case err != nil:
		return r.failed(e, err)
	case key != r.key:
		r.s.log.Error("diskdrv: an object's header holds another key", "key", r.key, "header", key)
		return contract.Fault
	case size != rowBytes(r.spans):
		return contract.Fault // an object of another size: nothing written
	}
	off := int64(headerBytes)
	for _, sp := range r.spans {
		if err := r.readAll(fd, at(sp.Addr, sp.Len), off); err != nil {
			return r.failed(e, err)
		}
		off += sp.Len
	}
	return contract.Ready
}

// failed ends a get whose read failed: Fault, and an object found torn
// (its file ends early, its header is not one) is dropped.
func (r *row) failed(e *entry, err error) contract.RowStatus {
	if errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, errBadHeader) {
		r.s.log.Error("diskdrv: dropping a damaged object", "key", r.key, "err", err)
		r.s.forget(e)
	}
	return contract.Fault
}

func rowBytes(spans []contract.Span) int64 {
	n := int64(0)
	for _, sp := range spans {
		n += sp.Len
	}
	return n
}

// syncDir syncs a directory: a rename in it survives a power loss.
func syncDir(dir string) error {
	fd, err := unix.Open(dir, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return err
	}
	defer unix.Close(fd)
	return unix.Fsync(fd)
}
