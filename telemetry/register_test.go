package telemetry_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric/noop"

	"github.com/kvshare/kvshare/contract"
	"github.com/kvshare/kvshare/telemetry"
)

// After Unregister the backend is never read again and reports nothing;
// the other registration on the same provider goes on.
func TestUnregisterStopsObserving(t *testing.T) {
	mp, reader := newReader(t)
	a := &cannedBackend{stats: contract.Stats{Attempts: 1}}
	b := &cannedBackend{stats: contract.Stats{Attempts: 2}}
	lenderA, lenderB := attribute.String("lender", "a"), attribute.String("lender", "b")
	regA, err := telemetry.Observe(mp, a, lenderA)
	require.NoError(t, err)
	regB, err := telemetry.Observe(mp, b, lenderB)
	require.NoError(t, err)

	r := collect(t, reader)
	assert.EqualValues(t, 1, r.value(t, "kvshare.attempt.started", lenderA))
	assert.EqualValues(t, 2, r.value(t, "kvshare.attempt.started", lenderB))

	require.NoError(t, regA.Unregister())
	r = collect(t, reader)
	assert.EqualValues(t, 1, a.calls.Load(), "not read after Unregister")
	assert.Len(t, r.points(t, "kvshare.attempt.started"), 1)
	assert.EqualValues(t, 2, r.value(t, "kvshare.attempt.started", lenderB))

	require.NoError(t, regB.Unregister())
	assert.Empty(t, collect(t, reader), "nothing is observed any more")
	assert.EqualValues(t, 2, b.calls.Load())
}

// Bad arguments are refused before anything is made or registered.
func TestObserveRefusesBadArguments(t *testing.T) {
	mp := noop.NewMeterProvider()
	b := &cannedBackend{}
	cases := map[string]func() error{
		"no provider": func() error { _, err := telemetry.Observe(nil, b); return err },
		"no backend":  func() error { _, err := telemetry.Observe(mp, nil); return err },
		"status attribute": func() error {
			_, err := telemetry.Observe(mp, b, attribute.String("status", "x"))
			return err
		},
		"direction attribute": func() error {
			_, err := telemetry.Observe(mp, b, attribute.String("direction", "x"))
			return err
		},
		"attribute twice": func() error {
			_, err := telemetry.Observe(mp, b, attribute.String("lender", "a"), attribute.String("lender", "b"))
			return err
		},
		"empty key": func() error { _, err := telemetry.Observe(mp, b, attribute.String("", "a")); return err },
	}
	for name, call := range cases {
		t.Run(name, func(t *testing.T) {
			assert.ErrorIs(t, call(), telemetry.ErrArgument)
		})
	}
	assert.Zero(t, b.calls.Load())
}
