package bench

// inTurn runs one repetition's two sides, kvshare first on even
// repetitions and the floor first on odd ones, so that neither side
// always runs in the other's wake (a warm cache, a collector cycle it
// left).
func inTurn(rep int, kvshare, floor func()) {
	if rep%2 == 0 {
		kvshare()
		floor()
		return
	}
	floor()
	kvshare()
}

// inRotation runs one repetition's sides in order, starting with side
// rep mod len(sides) and wrapping around, so that each side goes first
// in one of every len(sides) repetitions; sides i and i+len/2 (with an
// even count) run in each order equally often.
func inRotation(rep int, sides ...func()) {
	for i := range sides {
		sides[(rep+i)%len(sides)]()
	}
}
