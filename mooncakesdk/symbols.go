package mooncakesdk

// symbolNames lists the nineteen functions of store_c.h. Loading looks every
// one of them up, and refuses a library that lacks any, even those this
// package never calls: a library missing one is not the ABI the code was
// written against.
var symbolNames = [...]string{
	"mooncake_store_create",
	"mooncake_store_destroy",
	"mooncake_store_setup",
	"mooncake_store_init_all",
	"mooncake_store_health_check",
	"mooncake_store_put",
	"mooncake_store_put_from",
	"mooncake_store_batch_put_from",
	"mooncake_store_get_into",
	"mooncake_store_batch_get_into",
	"mooncake_store_is_exist",
	"mooncake_store_batch_is_exist",
	"mooncake_store_get_size",
	"mooncake_store_get_hostname",
	"mooncake_store_remove",
	"mooncake_store_remove_by_regex",
	"mooncake_store_remove_all",
	"mooncake_store_register_buffer",
	"mooncake_store_unregister_buffer",
}

// storeFuncs are the functions this package calls, bound with purego.
// The Go types follow store_c.h on LP64 Linux: mooncake_store_t and void*
// are uintptr (addresses the Go runtime never dereferences), size_t and
// uint64_t are uint64, int is int32, int64_t is int64, const char* is a
// Go string (purego passes a NUL-terminated copy valid for the call; the
// header promises the library keeps no char* after returning), and
// const char** is a []*byte into one pinned buffer (see cKeys).
type storeFuncs struct {
	create           func() uintptr
	destroy          func(store uintptr)
	setup            func(store uintptr, localHostname, metadataServer string, globalSegmentSize, localBufferSize uint64, protocol, deviceName, masterServerAddr string) int32
	healthCheck      func(store uintptr) int32
	batchPutFrom     func(store uintptr, keys []*byte, buffers []uintptr, sizes []uint64, count uint64, config uintptr, results []int32) int32
	batchGetInto     func(store uintptr, keys []*byte, buffers []uintptr, sizes []uint64, count uint64, results []int64) int32
	batchIsExist     func(store uintptr, keys []*byte, count uint64, results []int32) int32
	getSize          func(store uintptr, key string) int64
	getHostname      func(store uintptr, buf []byte, bufLen uint64) int32
	registerBuffer   func(store uintptr, buffer uintptr, size uint64) int32
	unregisterBuffer func(store uintptr, buffer uintptr) int32
	remove           func(store uintptr, key string, force int32) int32
}

// bindings maps each symbol this package calls to its field.
func (f *storeFuncs) bindings() map[string]any {
	return map[string]any{
		"mooncake_store_create":            &f.create,
		"mooncake_store_destroy":           &f.destroy,
		"mooncake_store_setup":             &f.setup,
		"mooncake_store_health_check":      &f.healthCheck,
		"mooncake_store_batch_put_from":    &f.batchPutFrom,
		"mooncake_store_batch_get_into":    &f.batchGetInto,
		"mooncake_store_batch_is_exist":    &f.batchIsExist,
		"mooncake_store_get_size":          &f.getSize,
		"mooncake_store_get_hostname":      &f.getHostname,
		"mooncake_store_register_buffer":   &f.registerBuffer,
		"mooncake_store_unregister_buffer": &f.unregisterBuffer,
		"mooncake_store_remove":            &f.remove,
	}
}
