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
