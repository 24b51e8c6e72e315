package bench

import (
	"context"
	"errors"
	"fmt"
	"time"
)

// poolReport is measurement 5: kvshare against a raw loop of the same C
// ABI calls on the same pool, in GB/s each way, counting only rows that
// came back Ready; and, shaped for the store, kvshare submitting as
// `kvshare roundtrip` does against the same rows in large calls.
type poolReport struct {
	// Skipped says why the measurement did not run (no pool given).
	Skipped       string `json:"skipped,omitempty"`
	Pool          string `json:"pool,omitempty"`
	KeyPrefix     string `json:"key_prefix,omitempty"`
	BytesPerRound int64  `json:"bytes_per_round,omitempty"`
	Workers       int    `json:"workers,omitempty"`
	RowsPerCall   int    `json:"rows_per_call,omitempty"`
	BytesPerCall  int64  `json:"bytes_per_call,omitempty"`
	CallsInFlight int    `json:"calls_in_flight,omitempty"`
	WarmBytes     int64  `json:"warm_bytes,omitempty"`
	// RoundtripViewRows and RoundtripGoroutines shape the
	// roundtrip-shaped case: views of that many rows, submitted from that
	// many goroutines. LargeCallRows is the large-call floor's rows a
	// call (fewer where bytes_per_call caps it: each case says),
	// LargeCallGoroutines its goroutines.
	RoundtripViewRows   int        `json:"roundtrip_view_rows,omitempty"`
	RoundtripGoroutines int        `json:"roundtrip_goroutines,omitempty"`
	LargeCallRows       int        `json:"large_call_rows,omitempty"`
	LargeCallGoroutines int        `json:"large_call_goroutines,omitempty"`
	Cases               []poolCase `json:"cases,omitempty"`
}

// poolCase is one row size. Rates are 10⁹ bytes of Ready rows per
// second, one figure per repetition; ratios kvshare's over the raw
// loop's (the same-shape floor's), and the roundtrip-shaped case's over
// the large-call floor's. NotReady counts the rows, over every
// repetition, that did not come back Ready (a full pool answers at once:
// those rows are not counted as moved).
type poolCase struct {
	RowBytes        int64  `json:"row_bytes"`
	Rows            int    `json:"rows"`
	KvsharePutGBs   spread `json:"kvshare_put_gbs"`
	KvshareGetGBs   spread `json:"kvshare_get_gbs"`
	RawPutGBs       spread `json:"raw_put_gbs"`
	RawGetGBs       spread `json:"raw_get_gbs"`
	PutRatio        spread `json:"put_ratio"`
	GetRatio        spread `json:"get_ratio"`
	KvshareNotReady int    `json:"kvshare_not_ready"`
	RawNotReady     int    `json:"raw_not_ready"`
	// Shaped for the store: the roundtrip-shaped case, the large-call
	// floor (LargeCallRows rows a call, LargeCalls calls each way a
	// round) and the goal's ratios.
	RoundtripPutGBs   spread `json:"roundtrip_put_gbs,omitzero"`
	RoundtripGetGBs   spread `json:"roundtrip_get_gbs,omitzero"`
	LargePutGBs       spread `json:"large_call_put_gbs,omitzero"`
	LargeGetGBs       spread `json:"large_call_get_gbs,omitzero"`
	RoundtripPutRatio spread `json:"roundtrip_put_ratio,omitzero"`
	RoundtripGetRatio spread `json:"roundtrip_get_ratio,omitzero"`
	LargeCallRows     int    `json:"large_call_rows,omitempty"`
	LargeCalls        int    `json:"large_calls,omitempty"`
	RoundtripNotReady int    `json:"roundtrip_not_ready,omitempty"`
	LargeNotReady     int    `json:"large_call_not_ready,omitempty"`
}

// poolRound is what one side moved in one round: Ready rows and time,
// each way.
type poolRound struct {
	putReady, getReady int
	put, get           time.Duration
}

// poolSide is one side of measurement 5 at one row size: its GB/s each
// way, one figure a repetition, and its rows that did not come back
// Ready.
type poolSide struct {
	put, get []float64
	notReady int
}

// add counts one round of n rows of rowBytes each way and returns its
// GB/s, put and get.
func (s *poolSide) add(pr poolRound, n int, rowBytes int64) (put, get float64) {
	s.notReady += 2*n - pr.putReady - pr.getReady
	put, get = gbs(int64(pr.putReady)*rowBytes, pr.put), gbs(int64(pr.getReady)*rowBytes, pr.get)
	s.put, s.get = append(s.put, put), append(s.get, get)
	return put, get
}

// measureRealPool runs measurement 5 against target (which it closes):
// the provider's segment warmed first (rows put, then removed), then
// per repetition and row size one round of each side (kvshare, the
// roundtrip-shaped case, the same-shape floor and the large-call floor;
// which goes first changes every repetition), each under fresh keys,
// removed after the round.
func measureRealPool(ctx context.Context, o Options, target *poolTarget, step func(string)) (*poolReport, error) {
	r, err := newPoolRig(o, target)
	if err != nil {
		return nil, err
	}
	rep := &poolReport{
		Pool: target.describe, KeyPrefix: r.prefix, BytesPerRound: o.Pool.Bytes, Workers: r.drv.Workers,
		RowsPerCall: r.drv.RowsPerCall, BytesPerCall: r.drv.BytesPerCall, CallsInFlight: r.drv.CallsInFlight,
		RoundtripViewRows: o.Pool.RoundtripViewRows, RoundtripGoroutines: r.roundtripGoroutines(),
		LargeCallRows: largeRowsPerCall, LargeCallGoroutines: r.largeGoroutines(),
	}
	step("5 real pool: warming the segment")
	if rep.WarmBytes, err = r.warmSegment(target.warm); err != nil {
		return nil, errors.Join(err, r.close())
	}
	for ri, rs := range o.Pool.RowSizes {
		c, err := r.rowSize(ctx, ri, rs, step)
		if err != nil {
			return nil, errors.Join(err, r.close())
		}
		rep.Cases = append(rep.Cases, c)
	}
	return rep, r.close()
}

// rowSize measures one row size (region ri of the binding). The sides
// are listed kvshare's two first, then their floors in the same order,
// and rotated every repetition ([inRotation]): each side goes first in
// one of every four repetitions, and each goal's two sides run in each
// order in two of every four.
func (r *poolRig) rowSize(ctx context.Context, ri int, rowBytes int64, step func(string)) (poolCase, error) {
	n := int(r.o.Pool.Bytes / rowBytes)
	c := poolCase{RowBytes: rowBytes, Rows: n, LargeCallRows: r.largeCallRows(rowBytes)}
	c.LargeCalls = (n + c.LargeCallRows - 1) / c.LargeCallRows
	var kvS, rtS, rawS, largeS poolSide
	var putR, getR, rtPutR, rtGetR []float64
	for rep := range r.o.Reps {
		if err := ctx.Err(); err != nil {
			return c, err
		}
		step(fmt.Sprintf("5 real pool %s", size(rowBytes)))
		round := ri*r.o.Reps + rep
		var kv, rt, raw, large poolRound
		var kerr, terr, rerr, lerr error
		inRotation(rep,
			func() { kv, kerr = r.kvshareRound(ri, r.names('k', round, n)) },
			func() { rt, terr = r.roundtripRound(ri, r.names('t', round, n)) },
			func() { raw, rerr = r.rawRound(ri, rowBytes, r.names('r', round, n)) },
			func() { large, lerr = r.largeCallRound(ri, rowBytes, r.names('l', round, n)) },
		)
		if err := errors.Join(kerr, terr, rerr, lerr); err != nil {
			return c, err
		}
		kp, kg := kvS.add(kv, n, rowBytes)
		tp, tg := rtS.add(rt, n, rowBytes)
		rp, rg := rawS.add(raw, n, rowBytes)
		lp, lg := largeS.add(large, n, rowBytes)
		putR, getR = append(putR, ratio(kp, rp)), append(getR, ratio(kg, rg))
		rtPutR, rtGetR = append(rtPutR, ratio(tp, lp)), append(rtGetR, ratio(tg, lg))
	}
	c.KvsharePutGBs, c.KvshareGetGBs, c.RawPutGBs, c.RawGetGBs = spreadOf(kvS.put), spreadOf(kvS.get), spreadOf(rawS.put), spreadOf(rawS.get)
	c.PutRatio, c.GetRatio = spreadOf(putR), spreadOf(getR)
	c.KvshareNotReady, c.RawNotReady = kvS.notReady, rawS.notReady
	c.RoundtripPutGBs, c.RoundtripGetGBs, c.LargePutGBs, c.LargeGetGBs = spreadOf(rtS.put), spreadOf(rtS.get), spreadOf(largeS.put), spreadOf(largeS.get)
	c.RoundtripPutRatio, c.RoundtripGetRatio = spreadOf(rtPutR), spreadOf(rtGetR)
	c.RoundtripNotReady, c.LargeNotReady = rtS.notReady, largeS.notReady
	return c, nil
}
