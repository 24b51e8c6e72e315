package memdrv

// StoreStats are a store's figures at one moment ([Store.Stats]).
type StoreStats struct {
	// Capacity is, for a bounded store, the bytes of its chunks, taken
	// up front (0 once closed); for a store on the heap, the cap
	// SetCapacity set (0: unlimited). ChunkBytes is a bounded store's
	// chunk (0 on the heap).
	Capacity   int64
	ChunkBytes int64
	// InUse is, for a bounded store, the bytes of the chunks held now:
	// by objects, by puts under way and by dropped objects a get still
	// reads. At most Capacity.
	InUse int64
	// Objects and Bytes are the complete objects and their bytes.
	Objects int64
	Bytes   int64
	// Writing is the drivers' puts under way (their memory held);
	// Reading the gets reading an object now.
	Writing int64
	Reading int64
	// Evictions counts the objects evicted to make room since the store
	// was made, EvictedBytes their bytes; Declines the driver puts that
	// ended Declined (full, closed, beyond the capacity, or no room to
	// be made).
	Evictions    int64
	EvictedBytes int64
	Declines     int64
}

// Stats returns the store's figures, read at one moment.
func (s *Store) Stats() StoreStats {
	s.mu.Lock()
	defer s.mu.Unlock()
	st := StoreStats{
		Capacity: s.capacity, Objects: s.objects, Bytes: s.used, Writing: s.writing, Reading: s.reading,
		Evictions: s.evictions, EvictedBytes: s.evictedBytes, Declines: s.declines,
	}
	if p := s.chunks; p != nil {
		st.Capacity, st.ChunkBytes, st.InUse = p.count*p.size, p.size, p.inUse()*p.size
	}
	return st
}
