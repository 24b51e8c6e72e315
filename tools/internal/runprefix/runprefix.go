package runprefix

import (
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"time"

	"github.com/kvshare/kvshare/keys"
)

// DefaultBase is the base of a run's prefix when the caller has none
// (a store config without [blob] key_prefix).
const DefaultBase = "kvshare"

// New returns a prefix for one run of job under base: base/job/run (see
// the package documentation). An empty base means [DefaultBase]. The
// error wraps keys.ErrInvalidPrefix when the result breaks the key
// rules, naming base.
func New(base, job string) (string, error) {
	var random [4]byte
	_, _ = rand.Read(random[:]) // crypto/rand.Read never fails (Go 1.24+)
	return at(base, job, time.Now(), random)
}

// at is New for a given time and random part.
func at(base, job string, now time.Time, random [4]byte) (string, error) {
	if base == "" {
		base = DefaultBase
	}
	prefix := base + "/" + job + "/" + now.UTC().Format("20060102t150405z") + "-" + hex.EncodeToString(random[:])
	if _, err := keys.NewStem(prefix); err != nil {
		return "", fmt.Errorf("key prefix %q cannot start this run's keys (%s): %w", base, prefix, err)
	}
	return prefix, nil
}
