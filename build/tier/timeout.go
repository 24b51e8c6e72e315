package tier

import (
	"time"

	"github.com/kvshare/kvshare/patience"
)

// DefaultTimeout is each test binary's -test.timeout when the tier's
// variable sets none, at KVSHARE_WAIT_SCALE 1.
const DefaultTimeout = 20 * time.Minute

// defaultTimeout is DefaultTimeout times KVSHARE_WAIT_SCALE, as a
// -test.timeout value; an error names a bad value of the variable.
func defaultTimeout() (string, error) {
	scale, err := patience.Scale()
	if err != nil {
		return "", err
	}
	return patience.ScaledBy(DefaultTimeout, scale).Round(time.Second).String(), nil
}
