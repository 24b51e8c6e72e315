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

// writeAll writes bufs, in order, at off with pwritev, going on after
// short writes.
func (r *row) writeAll(fd int, bufs [][]byte, off int64) error {
	return r.moveAll(Write, unix.Pwritev, errNoProgress, fd, bufs, off)
}

// readAll fills bufs, in order, from off with preadv, going on after
// short reads; the end of the file before they are full is
// io.ErrUnexpectedEOF.
func (r *row) readAll(fd int, bufs [][]byte, off int64) error {
	return r.moveAll(Read, unix.Preadv, io.ErrUnexpectedEOF, fd, bufs, off)
}

// moveAll moves every byte of bufs, in order, from off with call
// (pwritev or preadv), going on after short moves; a call that moves
// nothing is atEnd. The seam is asked before each call, as op.
func (r *row) moveAll(op Op, call func(int, [][]byte, int64) (int, error), atEnd error, fd int, bufs [][]byte, off int64) error {
	for total(bufs) > 0 {
		f := r.ask(op)
		if f.Err != nil {
			return f.Err
		}
		chunk := bufs
		if f.Short {
			chunk = take(bufs, total(bufs)/2&^(pageBytes-1))
			if total(chunk) == 0 {
				return errNoProgress
			}
		}
		n, err := call(fd, chunk, off)
		if err != nil {
			return err
		}
		if n == 0 {
			return atEnd
		}
		bufs, off = drop(bufs, n), off+int64(n)
	}
	return nil
}

// total is the bytes of bufs.
func total(bufs [][]byte) int {
	n := 0
	for _, b := range bufs {
		n += len(b)
	}
	return n
}

// take is the first n bytes of bufs; drop all but them.
func take(bufs [][]byte, n int) [][]byte {
	var out [][]byte
	for _, b := range bufs {
		if n <= 0 {
			break
		}
		b = b[:min(len(b), n)]
		out = append(out, b)
		n -= len(b)
	}
	return out
}

func drop(bufs [][]byte, n int) [][]byte {
	for len(bufs) > 0 && n >= len(bufs[0]) {
		n -= len(bufs[0])
		bufs = bufs[1:]
	}
	if len(bufs) == 0 {
		return nil
	}
	out := append([][]byte{bufs[0][n:]}, bufs[1:]...)
	return out
}

// iovecs is the header page followed by the row's spans.
func (r *row) iovecs(page []byte) [][]byte {
	bufs := make([][]byte, 0, 1+len(r.spans))
	bufs = append(bufs, page)
	for _, sp := range r.spans {
		if sp.Len > 0 {
			bufs = append(bufs, at(sp.Addr, sp.Len))
		}
	}
	return bufs
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
	if err := r.writeAll(fd, r.iovecs(*pp), 0); err != nil {
		return err
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
// being written NotReady. A file whose length is not the row's (its
// header page and the row's bytes) is a Fault with nothing written:
// an object of another size, or, when its header says so, one found
// torn, which is dropped. Else the header and the payload are read in
// one preadv, the header page first: a header that holds another key
// is a Fault (the slot then holds that object's bytes, and the row
// says Fault). A failed or short read (EIO, the file ending early) is
// Fault, and the slot may hold part of the object.
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
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil {
		return contract.Fault
	}
	if st.Size != onDisk(rowBytes(r.spans)) {
		return r.otherSize(fd, e, *pp, st.Size)
	}
	if err := r.readAll(fd, r.iovecs(*pp), 0); err != nil {
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
		return r.failed(e, fmt.Errorf("%w: its header says %d bytes, its file holds %d", errBadHeader, size, st.Size-headerBytes))
	}
	return contract.Ready
}

// otherSize ends a get whose file is not the row's length: Fault, and
// the object is dropped when its header does not match its file.
func (r *row) otherSize(fd int, e *entry, page []byte, fileSize int64) contract.RowStatus {
	if err := r.readAll(fd, [][]byte{page}, 0); err != nil {
		return r.failed(e, err)
	}
	if _, size, err := decodeHeader(page); err != nil || onDisk(size) != fileSize {
		return r.failed(e, fmt.Errorf("%w: a file of %d bytes", io.ErrUnexpectedEOF, fileSize))
	}
	return contract.Fault // an object of another size: nothing written
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
