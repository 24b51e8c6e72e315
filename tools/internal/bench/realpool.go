package bench

import (
	"context"
	"errors"
	"fmt"
	"time"
)

// poolReport is measurement 5: kvshare against a raw loop of the same C
// ABI calls on the same pool, in GB/s each way, counting only rows that
// came back Ready.
type poolReport struct {
	// Skipped says why the measurement did not run (no pool given).
	Skipped       string     `json:"skipped,omitempty"`
	Pool          string     `json:"pool,omitempty"`
	KeyPrefix     string     `json:"key_prefix,omitempty"`
	BytesPerRound int64      `json:"bytes_per_round,omitempty"`
	Workers       int        `json:"workers,omitempty"`
	RowsPerCall   int        `json:"rows_per_call,omitempty"`
	BytesPerCall  int64      `json:"bytes_per_call,omitempty"`
	WarmBytes     int64      `json:"warm_bytes,omitempty"`
	Cases         []poolCase `json:"cases,omitempty"`
}

// poolCase is one row size. Rates are 10⁹ bytes of Ready rows per
// second, one figure per repetition; ratios kvshare's over the raw
// loop's. NotReady counts the rows, over every repetition, that did not
// come back Ready (a full pool answers at once: those rows are not
// counted as moved).
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
}

// poolRound is what one side moved in one round: Ready rows and time,
// each way.
type poolRound struct {
	putReady, getReady int
	put, get           time.Duration
}

// measureRealPool runs measurement 5 against target (which it closes):
// the provider's segment warmed first (rows put, then removed), then
// per repetition and row size one round of kvshare and one of the raw
// loop (which goes first changes every repetition), each under fresh
// keys, removed after the round.
func measureRealPool(ctx context.Context, o Options, target *poolTarget, step func(string)) (*poolReport, error) {
	r, err := newPoolRig(o, target)
	if err != nil {
		return nil, err
	}
	rep := &poolReport{
		Pool: target.describe, KeyPrefix: r.prefix, BytesPerRound: o.Pool.Bytes, Workers: r.drv.Workers,
		RowsPerCall: r.drv.RowsPerCall, BytesPerCall: r.drv.BytesPerCall,
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

// rowSize measures one row size (region ri of the binding).
func (r *poolRig) rowSize(ctx context.Context, ri int, rowBytes int64, step func(string)) (poolCase, error) {
	n := int(r.o.Pool.Bytes / rowBytes)
	c := poolCase{RowBytes: rowBytes, Rows: n}
	var kvPut, kvGet, rawPut, rawGet, putR, getR []float64
	for rep := range r.o.Reps {
		if err := ctx.Err(); err != nil {
			return c, err
		}
		step(fmt.Sprintf("5 real pool %s", size(rowBytes)))
		round := ri*r.o.Reps + rep
		var kv, raw poolRound
		var kerr, rerr error
		runKv := func() { kv, kerr = r.kvshareRound(ri, r.names('k', round, n)) }
		runRaw := func() { raw, rerr = r.rawRound(ri, rowBytes, r.names('r', round, n)) }
		inTurn(rep, runKv, runRaw)
		if err := errors.Join(kerr, rerr); err != nil {
			return c, err
		}
		c.KvshareNotReady += 2*n - kv.putReady - kv.getReady
		c.RawNotReady += 2*n - raw.putReady - raw.getReady
		kp, kg := gbs(int64(kv.putReady)*rowBytes, kv.put), gbs(int64(kv.getReady)*rowBytes, kv.get)
		rp, rg := gbs(int64(raw.putReady)*rowBytes, raw.put), gbs(int64(raw.getReady)*rowBytes, raw.get)
		kvPut, kvGet, rawPut, rawGet = append(kvPut, kp), append(kvGet, kg), append(rawPut, rp), append(rawGet, rg)
		putR, getR = append(putR, ratio(kp, rp)), append(getR, ratio(kg, rg))
	}
	c.KvsharePutGBs, c.KvshareGetGBs, c.RawPutGBs, c.RawGetGBs = spreadOf(kvPut), spreadOf(kvGet), spreadOf(rawPut), spreadOf(rawGet)
	c.PutRatio, c.GetRatio = spreadOf(putR), spreadOf(getR)
	return c, nil
}
