package storeconfig

import (
	"github.com/kvshare/kvshare/keys"
)

// DefaultKeyPrefix is the key prefix of a store file whose [blob] section
// leaves key_prefix out (or that has no [blob] section): the base the
// kvshare command stores under.
const DefaultKeyPrefix = "kvshare"

// Blob is the [blob] section: the settings of the blob backend that
// stand above any particular store.
type Blob struct {
	// KeyPrefix (key_prefix) starts every store key the backend builds;
	// empty means DefaultKeyPrefix.
	KeyPrefix string
	// RowsPerCall (rows_per_call) caps the rows of one driver call; 0
	// means no cap of the backend's own.
	RowsPerCall int
	// BytesPerCall (bytes_per_call) caps the bytes of one driver call; 0
	// means no cap of the backend's own.
	BytesPerCall int64
	// Scope is the file's [scope] section: the scope every key is made
	// under (binding.Config.Scope); the zero Scope, a file without the
	// section, makes unscoped keys.
	Scope keys.Scope
}

// The keys of the [blob] section, as a file spells them.
const (
	BlobSection     = "blob"
	KeyKeyPrefix    = "key_prefix"
	KeyRowsPerCall  = "rows_per_call"
	KeyBytesPerCall = "bytes_per_call"
)

// The ranges of the [blob] section's caps (and of a store section's
// caps of the same name).
const (
	MaxRowsPerCall  = 1 << 16
	MaxBytesPerCall = 1 << 40
)

// BlobKeys lists the keys of the [blob] section.
var BlobKeys = []string{KeyKeyPrefix, KeyRowsPerCall, KeyBytesPerCall}

// WithDefaults returns b with an empty KeyPrefix made DefaultKeyPrefix.
func (b Blob) WithDefaults() Blob {
	if b.KeyPrefix == "" {
		b.KeyPrefix = DefaultKeyPrefix
	}
	return b
}

// Validate checks b's values: a key prefix keys.NewStem accepts (empty
// is DefaultKeyPrefix), rows_per_call from 0 to MaxRowsPerCall,
// bytes_per_call from 0 to MaxBytesPerCall, and a Scope that is zero or
// valid (keys.Scope.Validate: each field broken is refused in section
// [scope], under its key). Each refusal is
// an [*Error] naming the section and key (file: the file, or "" for a
// Blob built in code); several are joined.
func (b Blob) Validate(file string) error { return b.Check(file).Err() }

// Check is Validate's refusals, one by one.
func (b Blob) Check(file string) Findings {
	var errs Findings
	if _, err := keys.NewStem(b.WithDefaults().KeyPrefix); err != nil {
		errs.Add(&Error{File: file, Section: BlobSection, Key: KeyKeyPrefix, Reason: "not a usable key prefix", Err: err})
	}
	errs.InRange(file, BlobSection, KeyRowsPerCall, int64(b.RowsPerCall), 0, MaxRowsPerCall)
	errs.InRange(file, BlobSection, KeyBytesPerCall, b.BytesPerCall, 0, MaxBytesPerCall)
	if !b.Scope.IsZero() {
		errs = append(errs, ScopeFindings(file, b.Scope.Validate())...)
	}
	return errs
}
