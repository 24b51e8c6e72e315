package storefile

import (
	"errors"
	"fmt"
	"io/fs"
	"strings"

	"github.com/kvshare/kvshare/storeconfig"
	"github.com/kvshare/kvshare/storeconfig/tomlfile"
)

// Kind is the store a store file is for.
type Kind int

// The kinds of store file.
const (
	// Mooncake: the file holds a [mooncake] section.
	Mooncake Kind = iota + 1
	// Redis: the file holds a [redis] section.
	Redis
	// Memory: the file holds a [memory] section and no other store's:
	// the embedded in-memory store.
	Memory
	// Disk: the file holds a [disk] section and no other store's: the
	// disk tier.
	Disk
)

// The store sections, as a file spells them.
const (
	MooncakeSection = "mooncake"
	RedisSection    = "redis"
	MemorySection   = storeconfig.MemorySection
	DiskSection     = storeconfig.DiskSection
)

// String names the kind: "Mooncake" or "Redis".
func (k Kind) String() string {
	switch k {
	case Mooncake:
		return "Mooncake"
	case Redis:
		return "Redis"
	case Memory:
		return "the embedded store"
	case Disk:
		return "the disk tier"
	}
	return fmt.Sprintf("Kind(%d)", int(k))
}

// ErrKind is wrapped by every error of [Read] and [Parse].
var ErrKind = errors.New("storefile: cannot tell which store the file is for")

// Read reads the store file at path and says which store it is for.
func Read(path string) (Kind, error) {
	return kindOf(path, tomlfile.Read(path, sections))
}

// Parse says which store the store file data, named file, is for.
func Parse(file string, data []byte) (Kind, error) {
	return kindOf(file, tomlfile.Parse(file, data, sections))
}

// sections are the store sections looked for; their keys are the
// store's parser's to check ([memory], like [blob], every reader knows).
var sections = map[string][]string{MooncakeSection: nil, RedisSection: nil}

func kindOf(file string, f *tomlfile.File) (Kind, error) {
	if !f.Parsed() {
		// An unreadable or malformed file: its one refusal says why,
		// first.
		err := f.Finish()
		if pe := (*fs.PathError)(nil); errors.Is(err, fs.ErrNotExist) && errors.As(err, &pe) {
			return 0, refusal{fmt.Sprintf("store file %s does not exist (%v)", file, pe.Err), err}
		}
		return 0, refusal{err.Error(), err}
	}
	mooncake, redis, memory := f.Has(MooncakeSection), f.Has(RedisSection), f.Has(MemorySection)
	if f.Has(DiskSection) {
		for _, other := range []string{MooncakeSection, RedisSection, MemorySection} {
			if f.Has(other) {
				return 0, fmt.Errorf("%w: %s holds both [disk] (the disk tier) and [%s]: a store file is for one store; split it into two files", ErrKind, file, other)
			}
		}
		return Disk, nil
	}
	switch {
	case mooncake && redis:
		return 0, fmt.Errorf("%w: %s holds both [mooncake] and [redis]: a store file is for one store; split it into two files", ErrKind, file)
	case memory && (mooncake || redis):
		other := MooncakeSection
		if redis {
			other = RedisSection
		}
		return 0, fmt.Errorf("%w: %s holds both [memory] (the embedded store) and [%s]: a store file is for one store; split it into two files", ErrKind, file, other)
	case mooncake:
		return Mooncake, nil
	case redis:
		return Redis, nil
	case memory:
		return Memory, nil
	}
	const neither = "neither [mooncake] (a Mooncake pool) nor [redis] (a Redis server) nor [memory] (the embedded store) nor [disk] (the disk tier)"
	if unknown := f.UnknownSections(); len(unknown) > 0 {
		return 0, fmt.Errorf("%w: %s holds %s, and %s", ErrKind, file, unknownSections(unknown), neither)
	}
	return 0, fmt.Errorf("%w: %s holds %s: add the section of the store it is for", ErrKind, file, neither)
}

// storeSections are the sections that say which store a file is for.
var storeSections = []string{MooncakeSection, RedisSection, MemorySection, DiskSection}

// unknownSections names sections of a file that no store file takes,
// each with the store section it is likely a misspelling of:
// "[mooncak] (did you mean [mooncake]?), a section no store file takes".
func unknownSections(names []string) string {
	parts := make([]string, len(names))
	for i, n := range names {
		parts[i] = "[" + n + "]"
		if near := tomlfile.Nearest(n, storeSections); near != "" {
			parts[i] += " (did you mean [" + near + "]?)"
		}
	}
	if len(names) == 1 {
		return parts[0] + ", a section no store file takes"
	}
	return strings.Join(parts, ", ") + ", sections no store file takes"
}

// refusal is an error of [Read] or [Parse] whose cause says it all (a
// file missing, unreadable or malformed): it reads as text and wraps
// [ErrKind] and the cause.
type refusal struct {
	text  string
	cause error
}

func (r refusal) Error() string   { return r.text }
func (r refusal) Unwrap() []error { return []error{ErrKind, r.cause} }
