//go:build race

package binding

// raceEnabled: the race detector is on, and it drops a sync.Pool's Puts
// at random, so tests of what a pool keeps skip.
const raceEnabled = true
