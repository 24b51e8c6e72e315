package conformance

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/kvshare/kvshare/contract"
	"github.com/kvshare/kvshare/memdrv"
	"github.com/kvshare/kvshare/memdrv/broken"
)

// The suite frees a region only on proof that nothing can touch it, and
// frees it then: these tests read the "kept region" lines teardown logs.

// TestFreesOnlyOnProof runs the whole suite against the in-memory
// driver: the only regions kept are those an unprovable operation
// covers, in the checks that stage one.
func TestFreesOnlyOnProof(t *testing.T) {
	root := &record{}
	run(root, memHarness(memdrv.Options{}, false))
	require.Empty(t, root.findings())
	kept := map[string]bool{}
	for _, r := range root.all() {
		for _, l := range r.logs {
			if strings.HasPrefix(l, "kept region ") {
				kept[r.name] = true
				assert.Contains(t, l, "access was never proven ended (last seen unprovable)", r.name)
			}
		}
	}
	assert.Equal(t, map[string]bool{"unprovable-terminal": true}, kept)
}

// TestKeepsWhatUnregisterLiedAbout: a driver that answers nil to
// Unregister of a region an unprovable get covers does not get the
// memory back; the suite keeps it on the operation's account.
func TestKeepsWhatUnregisterLiedAbout(t *testing.T) {
	h := brokenHarness(broken.UnregisterWhileBusy, memdrv.Options{})
	h.Only = []string{"unprovable-terminal"}
	root := &record{}
	run(root, h)
	r := root.find("unprovable-terminal")
	require.NotNil(t, r)
	assert.True(t, anyContains(r.findings(), "Unregister of region r1 succeeded while an operation covering it is unprovable"),
		"findings: %q", r.findings())
	assert.True(t, anyContains(r.logged(), `mapped for the life of the process: get of 1 row (name "unprovable"): access was never proven ended`),
		"logs: %q", r.logged())
	assert.True(t, anyContains(r.logged(), "kept region r1 "), "logs: %q", r.logged())
}

// stickyRegions refuses every Unregister, as if each region were busy.
type stickyRegions struct{ *memdrv.Driver }

func (stickyRegions) Unregister(contract.Registration) error {
	return fmt.Errorf("%w: sticky: every region stays registered", contract.ErrDriverRejected)
}

// TestKeepsRegionsNotRevoked: memory whose registration the driver
// would not revoke stays mapped, whatever became of the operations.
func TestKeepsRegionsNotRevoked(t *testing.T) {
	h := deviantHarness(func(d *memdrv.Driver) contract.Driver { return stickyRegions{d} }, memdrv.Options{})
	h.Only = []string{"unregister-revokes"}
	root := &record{}
	run(root, h)
	r := root.find("unregister-revokes")
	require.NotNil(t, r)
	assert.True(t, anyContains(r.findings(), "Unregister of idle region r1: kvshare: driver rejected: sticky"), "findings: %q", r.findings())
	assert.True(t, anyContains(r.logged(), "kept region r1 "), "logs: %q", r.logged())
	assert.True(t, anyContains(r.logged(), ": registration 1 was not revoked"), "logs: %q", r.logged())
}

// TestRevokesLiveMaybeRegistrations: a registration that failed but may
// be live (a *RegistrationError with a handle) is revoked at teardown
// before its memory is freed, for Register and RegisterRegions alike.
func TestRevokesLiveMaybeRegistrations(t *testing.T) {
	for _, c := range []struct {
		check string
		stage func(*memdrv.TogetherDriver)
	}{
		{"unregister-revokes", func(d *memdrv.TogetherDriver) {
			d.FailNextRegister(&contract.RegistrationError{Registration: 1, Err: errors.New("staged")})
		}},
		{"together-revokes", func(d *memdrv.TogetherDriver) { d.FailNextRegistration(true) }},
	} {
		t.Run(c.check, func(t *testing.T) {
			var d *memdrv.TogetherDriver
			root := &record{}
			run(root, Harness{Only: []string{c.check}, New: func() (*Subject, error) {
				s := memdrv.NewStore()
				d = memdrv.NewTogether(s, quiet(memdrv.Options{}))
				c.stage(d)
				return memSubject(d, d.Driver, s), nil
			}})
			r := root.find(c.check)
			require.NotNil(t, r)
			assert.True(t, anyContains(r.findings(), "staged"), "the staged failure was not reported: %q", r.findings())
			assert.Empty(t, d.Regions(), "a registration that may be live was left registered")
			assert.False(t, anyContains(r.logged(), "kept region"), "logs: %q", r.logged())
		})
	}
}
