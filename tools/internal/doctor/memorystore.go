package doctor

import (
	"strings"

	"github.com/kvshare/kvshare/hostmem"
	"github.com/kvshare/kvshare/storeconfig"
	"github.com/kvshare/kvshare/storeconfig/tomlfile"
	"github.com/kvshare/kvshare/tools/internal/roundtrip"
	"github.com/kvshare/kvshare/tools/internal/runprefix"
)

// CheckMemory is the check of an embedded store's file ([memory]) after
// CheckConfig and CheckKeyPrefix: its capacity mapped as the store
// would map it.
const CheckMemory = "memory"

// memoryChecks lists every check of an embedded store's file in order.
var memoryChecks = [...]string{CheckConfig, CheckKeyPrefix, CheckMemory}

// runMemory is Run for an embedded store's file: the config, the key
// prefix, and the capacity mapped with the pages and the lock asked
// (not faulted in, and given back at once), saying what it got.
func runMemory(opts Options) Report {
	r := &run{Report: Report{File: opts.ConfigPath}, all: memoryChecks[:]}
	blob, mem, f := checkMemoryConfig(opts.ConfigPath)
	if !r.add(f) {
		r.skipRest("the config was refused")
		return r.Report
	}
	r.add(checkMemoryKeyPrefix(opts.ConfigPath, blob))
	r.add(checkMapping(mem))
	return r.Report
}

// checkMemoryConfig reads [blob] and [memory] strictly, as the store's
// reader does.
func checkMemoryConfig(path string) (storeconfig.Blob, storeconfig.Memory, Finding) {
	f := tomlfile.Read(path, nil)
	blob := f.Blob()
	mem := f.Memory()
	if err := f.Finish(); err != nil {
		return blob, mem, fail(CheckConfig, "%s", configLines(err))
	}
	lock := ""
	if mem.Lock {
		lock = ", locked"
	}
	chunk := mem.ChunkBytes
	if chunk == 0 {
		chunk = storeconfig.DefaultChunkBytes
	}
	return blob, mem, ok(CheckConfig, "%s: the embedded store, %s in chunks of %s, huge pages %s%s, %d workers",
		path, size(mem.Capacity), size(chunk), mem.HugePages, lock, mem.Workers)
}

// checkMemoryKeyPrefix checks [blob] key_prefix under the key rules (an
// embedded store's file has no probe to put under it).
func checkMemoryKeyPrefix(file string, blob storeconfig.Blob) Finding {
	if _, err := runprefix.New(blob.KeyPrefix, "doctor"); err != nil {
		return fail(CheckKeyPrefix, "%s: [blob] key_prefix: %v", file, err)
	}
	if blob.KeyPrefix == "" {
		return ok(CheckKeyPrefix, "[blob] key_prefix not set: keys start with %q", runprefix.DefaultBase)
	}
	return ok(CheckKeyPrefix, "%q", blob.KeyPrefix)
}

// checkMapping maps the capacity as the store would, without faulting
// it in, and gives it back: a refused mapping fails; huge pages (2 MiB
// pages in place of transparent ones advised count as given) or a lock
// asked and not given warn, saying why.
func checkMapping(m storeconfig.Memory) Finding {
	o := roundtrip.StoreOptions(m)
	if err := o.Validate(); err != nil {
		return fail(CheckMemory, "%v", err)
	}
	if o.Capacity == 0 {
		return ok(CheckMemory, "capacity 0: the store holds nothing (every put declined), nothing to map")
	}
	chunk := m.ChunkBytes
	if chunk == 0 {
		chunk = storeconfig.DefaultChunkBytes
	}
	got, err := hostmem.Map(hostmem.Geometry{SlotBytes: chunk, SlotCount: int(m.Capacity / chunk)}, hostmem.Options{HugePages: o.HugePages, Lock: o.Lock})
	if err != nil {
		return fail(CheckMemory, "mapping %s as the store would: %v", size(m.Capacity), err)
	}
	rep := got.Report()
	if err := got.Free(); err != nil {
		return fail(CheckMemory, "giving the probe mapping back: %v", err)
	}
	var short []string
	if o.HugePages != hostmem.NormalPages && rep.Pages != o.HugePages && !rep.Advised {
		short = append(short, "huge pages")
	}
	if o.Lock && !rep.Locked {
		short = append(short, "the lock")
	}
	if len(short) > 0 {
		return warn(CheckMemory, "%s asked and not given: %v (the store runs without)", strings.Join(short, " and "), rep)
	}
	return ok(CheckMemory, "%v", rep)
}
