//go:build !race

package binding

// raceEnabled: the race detector is on (see race_test.go).
const raceEnabled = false
