package conformance_test

import (
	"fmt"
	"strings"

	"github.com/kvshare/kvshare/conformance"
)

// Checks names what Harness.Only and `go test -run` select: here the
// checks of a driver that registers regions together.
func ExampleChecks() {
	var only []string
	for _, c := range conformance.Checks() {
		if strings.HasPrefix(c.Name, "together-") {
			only = append(only, c.Name)
		}
	}
	fmt.Println(only)
	// Output: [together-validates together-revokes together-busy]
}
