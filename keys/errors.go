package keys

import "errors"

// The errors of the package. Each is returned wrapped with a reason that
// names what was wrong (the rule, the byte and its offset, the index of a
// name); match them with [errors.Is].
var (
	// ErrInvalidPrefix is returned by [NewStem] when the prefix breaks
	// one of the prefix rules (see the package documentation), by
	// [Stem.Key] and [Stem.Keys] when called on the zero [Stem], and by
	// [ParseKey] (together with [ErrInvalidKey]) when the part of a key
	// before "/v1/" is not a valid prefix.
	ErrInvalidPrefix = errors.New("keys: invalid prefix")

	// ErrInvalidName is returned by [Stem.Key] and [Stem.Keys] for a name
	// that is empty or longer than [MaxNameBytes], and by [ParseKey]
	// (together with [ErrInvalidKey]) when the encoded name is empty or
	// decodes to more than [MaxNameBytes].
	ErrInvalidName = errors.New("keys: invalid name")

	// ErrInvalidKey is returned by [ParseKey] for a string that is not a
	// key of the grammar in the package documentation.
	ErrInvalidKey = errors.New("keys: invalid key")
)

// ErrInvalidScope is returned (as a [*ScopeError] naming the field, or
// wrapped with the reason) by [Scope.Validate], [Scope.MarshalText],
// [Scope.Digest], [ParseScope] and [NewScopedStem] for a scope that
// breaks a field's rule or text that is not a scope's canonical
// encoding.
var ErrInvalidScope = errors.New("keys: invalid scope")
