package drivekit

// takeSpare pops the last of the spares, or returns a new T when there
// is none.
func takeSpare[T any](spares *[]*T) *T {
	s := *spares
	if len(s) == 0 {
		return new(T)
	}
	x := s[len(s)-1]
	s[len(s)-1] = nil
	*spares = s[:len(s)-1]
	return x
}

// keepSpare keeps x among the spares while they are fewer than limit.
func keepSpare[T any](spares *[]*T, x *T, limit int) {
	if len(*spares) < limit {
		*spares = append(*spares, x)
	}
}
