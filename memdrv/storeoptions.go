package memdrv

import (
	"errors"
	"fmt"
	"math"

	"github.com/kvshare/kvshare/hostmem"
)

// ErrStoreOptions is wrapped by every refusal of [StoreOptions]: the
// error names the field and what was wrong. Nothing was mapped.
var ErrStoreOptions = errors.New("memdrv: bad store options")

// The chunk sizes a bounded store takes.
const (
	// DefaultChunkBytes is the chunk of a bounded store whose options
	// leave ChunkBytes out.
	DefaultChunkBytes = 64 << 10
	// MinChunkBytes and MaxChunkBytes bound ChunkBytes, which must be a
	// multiple of MinChunkBytes (every chunk starts on a cache line).
	MinChunkBytes = 64
	MaxChunkBytes = 1 << 30
	// MaxChunks bounds the chunks of one store (Capacity / ChunkBytes).
	MaxChunks = math.MaxInt32
)

// StoreOptions shape a bounded store ([NewBoundedStore]): its capacity,
// taken up front outside the Go heap, cut into chunks of one size.
type StoreOptions struct {
	// Capacity is the bytes of memory the store takes up front, rounded
	// down to whole chunks. 0 is a store that holds nothing: every put
	// is Declined. Negative is refused.
	Capacity int64
	// ChunkBytes is the size of the store's chunks: an object takes
	// its size rounded up to whole chunks. 0 means DefaultChunkBytes;
	// otherwise a multiple of MinChunkBytes up to MaxChunkBytes. Make
	// it a divisor of the rows' sizes (the smallest row of the node's
	// model layouts, say) and no byte is wasted.
	ChunkBytes int64
	// HugePages asks for huge pages (package hostmem: without them, base
	// pages, said so in [Store.Memory]).
	HugePages hostmem.HugePages
	// Lock asks for mlock (best effort, said so in [Store.Memory]).
	Lock bool
}

// chunkBytes is ChunkBytes with its default.
func (o StoreOptions) chunkBytes() int64 {
	if o.ChunkBytes == 0 {
		return DefaultChunkBytes
	}
	return o.ChunkBytes
}

// chunks is the number of chunks the capacity holds.
func (o StoreOptions) chunks() int64 { return o.Capacity / o.chunkBytes() }

// Validate refuses options a bounded store cannot take, naming the
// field: an error wrapping [ErrStoreOptions], or nil.
func (o StoreOptions) Validate() error {
	c := o.chunkBytes()
	switch {
	case o.Capacity < 0:
		return fmt.Errorf("%w: Capacity is %d, want 0 or more bytes", ErrStoreOptions, o.Capacity)
	case c < MinChunkBytes || c > MaxChunkBytes || c%MinChunkBytes != 0:
		return fmt.Errorf("%w: ChunkBytes is %d, want a multiple of %d from %d to %d (0: %d)",
			ErrStoreOptions, o.ChunkBytes, MinChunkBytes, MinChunkBytes, MaxChunkBytes, DefaultChunkBytes)
	case o.Capacity > 0 && o.Capacity < c:
		return fmt.Errorf("%w: Capacity %d holds no chunk of %d bytes (0 is a store that holds nothing)", ErrStoreOptions, o.Capacity, c)
	case o.chunks() > MaxChunks:
		return fmt.Errorf("%w: Capacity %d is %d chunks of %d bytes, want at most %d (larger chunks)", ErrStoreOptions, o.Capacity, o.chunks(), c, MaxChunks)
	case o.HugePages > hostmem.HugePages1GiB:
		return fmt.Errorf("%w: HugePages is %d, not a page size hostmem knows", ErrStoreOptions, o.HugePages)
	}
	return nil
}
