package mooncakesdk

import (
	"runtime"
	"unsafe"
)

// replicateConfig is mooncake_replicate_config_t as store_c.h declares
// it, laid out for a 64-bit target: size_t replica_num, int
// with_soft_pin, int with_hard_pin, const char **preferred_segments,
// size_t preferred_segments_count.
type replicateConfig struct {
	replicaNum uint64
	softPin    int32
	hardPin    int32
	preferred  **byte
	nPreferred uint64
}

// replicate is the replicate config a client passes to every put, kept
// for the client's life: the struct, the char* array of its preferred
// segments and their NUL-terminated names, all Go memory pinned until
// Destroy (so the struct may point at the array, and the array at the
// names, under the cgo pointer rules). A nil *replicate is the store's
// defaults (one replica, no pin, no preferred segment), passed as NULL.
type replicate struct {
	cfg    replicateConfig
	ptrs   []*byte
	pinner runtime.Pinner
}

// newReplicate builds the replicate config m asks for, or nil for the
// store's defaults.
func newReplicate(m MooncakeConfig) *replicate {
	if m.Replicas <= 1 && !m.SoftPin && len(m.PreferredSegments) == 0 {
		return nil
	}
	r := &replicate{cfg: replicateConfig{replicaNum: uint64(max(1, m.Replicas))}}
	if m.SoftPin {
		r.cfg.softPin = 1
	}
	for _, name := range m.PreferredSegments {
		b := append([]byte(name), 0)
		r.pinner.Pin(&b[0])
		r.ptrs = append(r.ptrs, &b[0])
	}
	if len(r.ptrs) > 0 {
		r.pinner.Pin(&r.ptrs[0])
		r.cfg.preferred, r.cfg.nPreferred = &r.ptrs[0], uint64(len(r.ptrs))
	}
	r.pinner.Pin(&r.cfg)
	return r
}

// addr is the config's address for the C call: 0 (NULL) for the
// defaults.
func (r *replicate) addr() uintptr {
	if r == nil {
		return 0
	}
	return uintptr(unsafe.Pointer(&r.cfg))
}

// release unpins the config once no call can read it any more (after
// the handle is destroyed).
func (r *replicate) release() {
	if r != nil {
		r.pinner.Unpin()
	}
}
