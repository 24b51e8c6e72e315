package patience

import (
	"errors"
	"fmt"
	"math"
	"os"
	"strconv"
	"strings"
	"sync"
	"time"
)

// EnvScale names the environment variable that scales every bound of a
// run: a positive number, 1 when unset or empty.
const EnvScale = "KVSHARE_WAIT_SCALE"

// MaxScale is the largest scale accepted.
const MaxScale = 1000

// DefaultWait is the base of [Wait]: what a test of the repository waits,
// at scale 1, for something that takes milliseconds on a quiet machine.
const DefaultWait = 10 * time.Second

// ErrBadScale is wrapped by the error of a KVSHARE_WAIT_SCALE that is not
// a number in (0, MaxScale].
var ErrBadScale = errors.New("patience: bad " + EnvScale)

var scaleOnce = sync.OnceValues(func() (float64, error) { return ParseScale(os.Getenv(EnvScale)) })

// Scale returns the factor KVSHARE_WAIT_SCALE sets for this process
// (read once), or an error wrapping ErrBadScale that names the value.
func Scale() (float64, error) { return scaleOnce() }

// ParseScale parses a value of KVSHARE_WAIT_SCALE: empty is 1; otherwise
// a decimal number greater than 0 and at most MaxScale.
func ParseScale(s string) (float64, error) {
	s = strings.TrimSpace(s)
	if s == "" {
		return 1, nil
	}
	f, err := strconv.ParseFloat(s, 64)
	if err != nil || math.IsNaN(f) || f <= 0 || f > MaxScale {
		return 0, fmt.Errorf("%w: %q is not a number greater than 0 and at most %d", ErrBadScale, s, MaxScale)
	}
	return f, nil
}

// Scaled returns d times Scale(). It panics, naming the variable and its
// value, when KVSHARE_WAIT_SCALE is bad: a test run with a setting it
// cannot honour stops at once rather than running with another.
func Scaled(d time.Duration) time.Duration {
	f, err := Scale()
	if err != nil {
		panic(err)
	}
	return ScaledBy(d, f)
}

// ScaledBy returns d times f, saturating at the largest duration.
func ScaledBy(d time.Duration, f float64) time.Duration {
	x := float64(d) * f
	if x >= math.MaxInt64 {
		return math.MaxInt64
	}
	return time.Duration(x)
}

// Wait returns the bound of the repository's tests: DefaultWait times
// Scale(). It panics like Scaled.
func Wait() time.Duration { return Scaled(DefaultWait) }
