package gpuroundtrip

import (
	"context"
	"testing"

	"github.com/kvshare/kvshare/contract"
	"github.com/kvshare/kvshare/memdrv"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// publishAndFetch writes pages into the publisher, publishes them, fills
// the fetcher's pages with the sentinel and fetches; it returns the
// pages published, the fetcher's pages after the fetch, and the fetch.
func (p *pair) publishAndFetch(t *testing.T, req Request, beforeFetch func()) (want, got []byte, fetch Transfer) {
	t.Helper()
	want = testPages(req.ID)
	require.NoError(t, p.pub.WritePages(want))
	pub, err := NewLeaseHolder(p.pub).Publish(testCtx(t), req)
	require.NoError(t, err)
	require.NoError(t, pub.Outcome.Fault)
	require.Equal(t, testLayers*testBlocks, pub.Delivered)
	assert.Equal(t, testBlocks, pub.Bound)
	assert.Equal(t, int64(len(want)), pub.CopyBytes)

	got = make([]byte, len(want))
	for i := range got {
		got[i] = sentinel
	}
	require.NoError(t, p.fet.WritePages(got))
	if beforeFetch != nil {
		beforeFetch()
	}
	fetch, err = NewLeaseHolder(p.fet).Fetch(testCtx(t), req)
	require.NoError(t, err)
	require.NoError(t, p.fet.ReadPages(got))
	return want, got, fetch
}

// checkPages checks the fetcher's pages: below the bound, every layer's
// pages are the published ones; at or past it, untouched, in every
// layer, even where the block arrived.
func checkPages(t *testing.T, want, got []byte, bound int) {
	t.Helper()
	untouched := make([]byte, testBlockBytes)
	for i := range untouched {
		untouched[i] = sentinel
	}
	for layer := range testLayers {
		for block := range testBlocks {
			if block < bound {
				assert.Equal(t, page(want, layer, block), page(got, layer, block), "layer %d block %d: below the bound", layer, block)
			} else {
				assert.Equal(t, untouched, page(got, layer, block), "layer %d block %d: at or past the bound", layer, block)
			}
		}
	}
}

// The whole round trip over the stand-in and memdrv: every block of
// every layer arrives, byte for byte, and the slots are lent again.
func TestRoundTripOverTheStandIn(t *testing.T) { testRoundTrip(t, NewHostDevice()) }

func testRoundTrip(t *testing.T, dev Device) {
	for _, rowsPerCall := range []int{0, 3} {
		t.Run(map[int]string{0: "one call a layer", 3: "three rows a call"}[rowsPerCall], func(t *testing.T) {
			p := newPairOn(t, dev, rowsPerCall)
			want, got, f := p.publishAndFetch(t, Request{ID: 7}, nil)
			require.NoError(t, f.Outcome.Fault)
			assert.Equal(t, []int{testBlocks, testBlocks, testBlocks, testBlocks}, f.Prefixes)
			assert.Equal(t, testBlocks, f.Bound)
			assert.Equal(t, testLayers*testBlocks, f.Delivered)
			assert.Equal(t, int64(len(want)), f.CopyBytes)
			assert.Equal(t, want, got)
			for _, l := range []*Lender{p.pub, p.fet} {
				lease, err := l.Lend(testCtx(t))
				require.NoError(t, err, "the slots went back to the lender")
				lease.Release()
				assert.Zero(t, l.Backend().Stats().RowsLent)
			}
		})
	}
}

// A fetch whose later blocks fault resumes only at the bound: the
// outcome carries the fault, and nothing at or past the bound reaches
// the pages, in any layer.
func TestFaultedFetchResumesAtTheBound(t *testing.T) { testFaultedFetch(t, NewHostDevice()) }

func testFaultedFetch(t *testing.T, dev Device) {
	const from = 5 // blocks from here on fault
	for _, tc := range []struct {
		name   string
		layers []int // layers whose blocks from `from` on fault
		exact  bool  // the bound is exactly `from` (else at most)
	}{
		// The last layer comes last in the view: every earlier call is
		// never cancelled, so the bound is exactly `from`.
		{"in the last layer", []int{testLayers - 1}, true},
		// A fault stops the fetch's later calls, so later layers may
		// deliver less: the bound is at most `from`.
		{"in every layer", []int{0, 1, 2, 3}, false},
		{"in the first layer", []int{0}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := newPairOn(t, dev, 2)
			req := Request{ID: 11}
			want, got, f := p.publishAndFetch(t, req, func() {
				var faulty []string
				for _, layer := range tc.layers {
					for block := from; block < testBlocks; block++ {
						faulty = append(faulty, p.key(t, req, layer, block))
					}
				}
				p.fetDrv.FailReads(faulty...)
			})
			require.Error(t, f.Outcome.Fault)
			assert.ErrorContains(t, f.Outcome.Fault, "fault")
			if tc.exact {
				assert.Equal(t, from, f.Bound)
				assert.Equal(t, []int{testBlocks, testBlocks, testBlocks, from}, f.Prefixes)
			} else {
				assert.LessOrEqual(t, f.Bound, from)
			}
			assert.Equal(t, ResumeBound(f.Prefixes), f.Bound)
			for _, layer := range tc.layers {
				assert.LessOrEqual(t, f.Prefixes[layer], from, "layer %d", layer)
			}
			assert.Equal(t, int64(f.Bound*testLayers*testBlockBytes), f.CopyBytes, "only blocks below the bound are copied")
			checkPages(t, want, got, f.Bound)
		})
	}
}

// A block missing from the store in one layer only: the other layers
// arrive whole (a miss does not stop a fetch), but the request resumes
// at that block, which is not what the whole view's prefix says.
func TestMissingBlockInOneLayerOnly(t *testing.T) { testMissingBlock(t, NewHostDevice()) }

func testMissingBlock(t *testing.T, dev Device) {
	const layer, block = 2, 3
	p := newPairOn(t, dev, 0)
	req := Request{ID: 13}
	want, got, f := p.publishAndFetch(t, req, func() {
		p.store.Delete(p.key(t, req, layer, block))
	})
	require.NoError(t, f.Outcome.Fault, "a miss is not a fault")
	assert.Equal(t, []int{testBlocks, testBlocks, block, testBlocks}, f.Prefixes)
	assert.Equal(t, block, f.Bound)
	assert.Equal(t, testLayers*testBlocks-1, f.Delivered)
	assert.Equal(t, 2*testBlocks+block, f.Outcome.Prefix(), "the view's prefix counts whole earlier layers")
	checkPages(t, want, got, block)
}

// While an attempt has not quiesced its slots stay lent: a lease holder
// whose context ends cancels the attempt and leaves the lease out; the
// slots go back to the lender only once the attempt quiesces.
func TestSlotsStayLentUntilQuiescence(t *testing.T) {
	p := newPair(t, 0)
	req := Request{ID: 17}
	require.NoError(t, p.pub.WritePages(testPages(req.ID)))
	_, err := NewLeaseHolder(p.pub).Publish(testCtx(t), req)
	require.NoError(t, err)

	gate := p.fetDrv.Hold(memdrv.GetDir)
	p.fetDrv.CompleteAfterCancel(true)
	ctx, cancel := context.WithCancel(testCtx(t))
	done := make(chan error, 1)
	go func() {
		_, err := NewLeaseHolder(p.fet).Fetch(ctx, req)
		done <- err
	}()
	require.NoError(t, gate.Held(testCtx(t)))
	cancel()
	err = <-done
	require.ErrorIs(t, err, context.Canceled)
	assert.ErrorContains(t, err, "did not quiesce")

	ended, stop := context.WithCancel(context.Background())
	stop()
	_, err = p.fet.Lend(ended)
	assert.ErrorIs(t, err, context.Canceled, "the slots are still lent")
	assert.NotZero(t, p.fet.Backend().Stats().RowsLent)

	gate.Release()
	lease, err := p.fet.Lend(testCtx(t))
	require.NoError(t, err, "the attempt quiesced and gave the slots back")
	lease.Release()
	assert.Zero(t, p.fet.Backend().Stats().RowsLent)
}

// A submission the backend refuses is an error, and the slots go back
// at once.
func TestRefusedSubmissionGivesTheSlotsBack(t *testing.T) {
	p := newPair(t, 0)
	for _, l := range []*Lender{p.pub, p.fet} {
		require.Empty(t, l.Backend().Shutdown(testCtx(t)))
	}
	_, err := NewLeaseHolder(p.pub).Publish(testCtx(t), Request{ID: 1})
	require.ErrorIs(t, err, contract.ErrSubmissionRejected)
	_, err = NewLeaseHolder(p.fet).Fetch(testCtx(t), Request{ID: 1})
	require.ErrorIs(t, err, contract.ErrSubmissionRejected)
	for _, l := range []*Lender{p.pub, p.fet} {
		lease, err := l.Lend(testCtx(t))
		require.NoError(t, err)
		lease.Release()
	}
}

// A closed lender lends nothing: its pages are gone.
func TestClosedLenderLendsNothing(t *testing.T) {
	p := newPair(t, 0)
	require.NoError(t, p.pub.Close(testCtx(t)))
	_, err := NewLeaseHolder(p.pub).Publish(testCtx(t), Request{ID: 1})
	require.ErrorIs(t, err, ErrLenderClosed)
	_, err = p.pub.Lend(testCtx(t))
	require.ErrorIs(t, err, ErrLenderClosed)
}
