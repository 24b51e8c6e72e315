package modules

import (
	"fmt"
	"path"
)

// Prefix is the module path every kvshare module starts with: the root
// module's path, and the prefix of every folder's module.
const Prefix = "github.com/kvshare/kvshare"

// Module is one Go module of the repository.
type Module struct {
	// Dir is the module's folder relative to the repository root, with
	// slashes; "." is the root module.
	Dir string
	// Imports is what the module's packages may import, tests aside:
	// sibling modules by folder ("contract"), others by module path or
	// path prefix ("github.com/ebitengine/purego"). The standard library
	// is always allowed; "*" allows anything.
	Imports []string
	// Tags are the build tags the module's own checks (vet, tests, the
	// dependency rules) build it with, comma-separated: "nvml" compiles
	// gpuroundtrip's NVML discovery; "mage" the root's magefile.
	Tags string
}

// Path is the module's path: Prefix for the root, Prefix/Dir otherwise.
func (m Module) Path() string {
	if m.Dir == "." {
		return Prefix
	}
	return Prefix + "/" + m.Dir
}

// Tag is the git tag that marks version of the module: the version itself
// for the root module, Dir/version for the others, as the go command
// looks them up in a repository holding several modules.
func (m Module) Tag(version string) string {
	if m.Dir == "." {
		return version
	}
	return path.Join(m.Dir, version)
}

// Sibling reports whether a module path names a kvshare module.
func Sibling(modulePath string) bool {
	return modulePath == Prefix || len(modulePath) > len(Prefix) && modulePath[:len(Prefix)+1] == Prefix+"/"
}

// Consumer is a module outside the workspace that takes kvshare modules
// by version only.
type Consumer struct {
	// Dir is its folder relative to the repository root, with slashes.
	Dir string
	// Forbidden lists module paths (or path prefixes) that must not
	// appear in the consumer's vendor/modules.txt: what taking only the
	// modules it needs must never pull in.
	Forbidden []string
	// Server names the store server the program needs while it runs:
	// empty for none, [ServerRedis] for a Redis server, which the check
	// starts on loopback and names to the program in the environment.
	Server string
}

// ServerRedis is [Consumer.Server] for a consumer that needs a Redis
// server: the check starts one and passes its address to the program as
// KVSHARE_REDIS_ADDR.
const ServerRedis = "redis"

// A List is a repository's modules and consumers. [Repo] is kvshare's.
type List struct {
	// Modules are the repository's modules, the root first.
	Modules []Module
	// Consumers are the outside consumers.
	Consumers []Consumer
}

// Find returns the module in folder dir.
func (l List) Find(dir string) (Module, error) {
	for _, m := range l.Modules {
		if m.Dir == dir {
			return m, nil
		}
	}
	return Module{}, fmt.Errorf("modules: no module in folder %q (build/modules lists them)", dir)
}

// Dirs is the folders of every module, in the list's order.
func (l List) Dirs() []string {
	dirs := make([]string, len(l.Modules))
	for i, m := range l.Modules {
		dirs[i] = m.Dir
	}
	return dirs
}

// GoModDirs is every folder with a go.mod the list names: modules, then
// consumers.
func (l List) GoModDirs() []string {
	dirs := l.Dirs()
	for _, c := range l.Consumers {
		dirs = append(dirs, c.Dir)
	}
	return dirs
}
