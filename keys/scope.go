package keys

import (
	"errors"
	"fmt"
	"strings"
	"unicode"
	"unicode/utf8"
)

// MaxScopeFieldBytes is the longest text field of a [Scope], in bytes.
const MaxScopeFieldBytes = 256

// Scope is the set of facts that make two engines' KV blocks
// interchangeable: two engines may share a block only when every field
// is equal. [NewScopedStem] folds a scope's [Scope.Digest] into every
// key, so that engines of different scopes never meet on a key.
//
// Text fields are compared byte for byte, never normalized ("fp16" and
// "float16" are two scopes: a miss, never a wrong hit). Each is valid
// UTF-8 of at most [MaxScopeFieldBytes] bytes without control
// characters. The zero Scope is no scope: it is not valid, and a caller
// that holds one builds unscoped keys ([NewStem]) or refuses.
//
// A Scope is a comparable value; == says whether two scopes are the same.
type Scope struct {
	// Model names the model (e.g. "meta-llama/Llama-3.1-8B-Instruct").
	// Required.
	Model string
	// Revision is the weights revision (a commit, a checksum, a tag).
	// Required: the same model name with other weights is another cache.
	Revision string
	// Adapter names the LoRA adapter the KV was computed with; "" means
	// the base model.
	Adapter string
	// KVDType is the element type of the cached K and V ("fp16", "bf16",
	// "fp8_e4m3", "int4"). Required.
	KVDType string
	// Quantization is how the KV is quantized beyond its element type
	// (scheme, scale granularity), as the engine names it; "" means none.
	Quantization string
	// TokensPerBlock is the number of tokens a block holds. At least 1.
	TokensPerBlock uint32
	// KVHeads is the number of KV heads a block holds (those of its
	// tensor-parallel shard). At least 1.
	KVHeads uint32
	// HeadDim is the dimension of one head. At least 1.
	HeadDim uint32
	// FirstLayer is the first layer a block holds; Layers, at least 1,
	// how many consecutive layers from there.
	FirstLayer, Layers uint32
	// TPRank and TPSize are the tensor-parallel rank whose shard a block
	// is and the tensor-parallel world size: TPSize at least 1, TPRank
	// below it.
	TPRank, TPSize uint32
	// PPRank and PPSize are the pipeline-parallel rank and world size:
	// PPSize at least 1, PPRank below it.
	PPRank, PPSize uint32
	// HashAlgorithm names the algorithm of the engine's block hashes, the
	// row names ("sha256-cbor", "xxh3-128"). Required.
	HashAlgorithm string
	// HashSeed is the seed of those hashes, as text; "" means unseeded.
	HashSeed string
	// Tenant names the tenant whose blocks these are; "" means none.
	Tenant string
}

// IsZero reports whether s is the zero Scope: no scope.
func (s Scope) IsZero() bool { return s == Scope{} }

// ScopeError is one field of a [Scope] that breaks its rule. It matches
// [ErrInvalidScope].
type ScopeError struct {
	// Field is the field's name as a store file's [scope] section and the
	// canonical encoding's documentation spell it ("kv_dtype").
	Field string
	// Reason says what is wrong with it.
	Reason string
}

func (e *ScopeError) Error() string {
	return fmt.Sprintf("%v: %s: %s", ErrInvalidScope, e.Field, e.Reason)
}

// Unwrap returns [ErrInvalidScope].
func (e *ScopeError) Unwrap() error { return ErrInvalidScope }

// Validate checks every field of s against its rule (see the field
// documentation). It returns nil, or every broken rule as a
// [*ScopeError] naming the field, joined in the fields' order; the error
// matches [ErrInvalidScope].
func (s Scope) Validate() error {
	var errs []error
	for _, f := range scopeFields {
		if reason := f.fault(&s); reason != "" {
			errs = append(errs, &ScopeError{Field: f.name, Reason: reason})
		}
	}
	if s.TPSize > 0 && s.TPRank >= s.TPSize {
		errs = append(errs, &ScopeError{Field: "tp_rank", Reason: fmt.Sprintf("%d, want below tp_size (%d)", s.TPRank, s.TPSize)})
	}
	if s.PPSize > 0 && s.PPRank >= s.PPSize {
		errs = append(errs, &ScopeError{Field: "pp_rank", Reason: fmt.Sprintf("%d, want below pp_size (%d)", s.PPRank, s.PPSize)})
	}
	if uint64(s.FirstLayer)+uint64(s.Layers) > 1<<32 {
		errs = append(errs, &ScopeError{Field: "layers", Reason: fmt.Sprintf("first_layer %d + layers %d is past the last layer number (%d)", s.FirstLayer, s.Layers, uint32(1<<32-1))})
	}
	return errors.Join(errs...)
}

// textFault returns "" when v may be a text field (optional: "" is
// allowed), or else why not.
func textFault(v string, required bool) string {
	switch {
	case v == "" && required:
		return "empty (required)"
	case len(v) > MaxScopeFieldBytes:
		return fmt.Sprintf("%d bytes, over the limit of %d", len(v), MaxScopeFieldBytes)
	case !utf8.ValidString(v):
		return fmt.Sprintf("not valid UTF-8 (at offset %d)", invalidUTF8At(v))
	}
	if i := strings.IndexFunc(v, unicode.IsControl); i >= 0 {
		r, _ := utf8.DecodeRuneInString(v[i:])
		return fmt.Sprintf("control character %U at offset %d", r, i)
	}
	return ""
}

// invalidUTF8At is the offset of v's first byte that is not valid UTF-8.
func invalidUTF8At(v string) int {
	for i, r := range v {
		if r == utf8.RuneError {
			if _, n := utf8.DecodeRuneInString(v[i:]); n == 1 {
				return i
			}
		}
	}
	return len(v)
}
