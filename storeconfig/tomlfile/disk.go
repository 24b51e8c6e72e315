package tomlfile

import (
	"strings"

	"github.com/kvshare/kvshare/storeconfig"
)

// Disk decodes the [disk] section, with the defaults for keys left out
// (storeconfig.Disk.WithDefaults), and checks its values; a file
// without the section gives the zero Disk (Has says whether it holds
// one). dir and capacity are required in the section.
func (f *File) Disk() storeconfig.Disk {
	f.disk = true
	var d storeconfig.Disk
	s := f.Section(storeconfig.DiskSection)
	if s == nil {
		return d
	}
	if s.Type(storeconfig.KeyDir) == "" {
		s.Refuse(storeconfig.KeyDir, "is required: the store's directory, an absolute path")
	}
	if s.Type(storeconfig.KeyCapacity) == "" {
		s.Refuse(storeconfig.KeyCapacity, "is required: the most bytes the objects take on disk (0: the disk's)")
	}
	d.Dir, _ = s.String(storeconfig.KeyDir, "")
	d.Capacity = s.Int(storeconfig.KeyCapacity, 0)
	d.Evict = s.Bool(storeconfig.KeyEvict, false)
	d.Durability, _ = s.String(storeconfig.KeyDurability, storeconfig.DurabilityFull)
	d.DirectIO = s.Bool(storeconfig.KeyDirectIO, true)
	d.Workers = int(s.Int(storeconfig.KeyWorkers, storeconfig.DefaultDiskWorkers))
	// Given, an empty durability is out of range, not left out; workers
	// = 0 means the default, as left out does.
	if d.Durability == "" {
		s.Refuse(storeconfig.KeyDurability, "must be one of %s, got \"\"", strings.Join(quoted(storeconfig.Durabilities), ", "))
	}
	d = d.WithDefaults()
	for _, e := range d.Check(f.name) {
		f.Add(e)
	}
	return d
}
