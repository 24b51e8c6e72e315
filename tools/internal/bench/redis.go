package bench

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"time"

	"github.com/kvshare/kvshare/contract"
)

// redisReport is measurement 7: kvshare over the Redis driver against a
// raw pipelined loop of the same commands on the same server or cluster
// (the floor), with a plain loop of single commands as context, in MB/s
// each way, counting only rows that came back Ready.
type redisReport struct {
	// Skipped says why the measurement did not run (no server given).
	Skipped   string `json:"skipped,omitempty"`
	Server    string `json:"server,omitempty"`
	KeyPrefix string `json:"key_prefix,omitempty"`
	// Nodes are a cluster's nodes, as its slot map names them (none for
	// one server).
	Nodes         []string    `json:"nodes,omitempty"`
	BytesPerRound int64       `json:"bytes_per_round,omitempty"`
	Workers       int         `json:"workers,omitempty"`
	RowsPerCall   int         `json:"rows_per_call,omitempty"`
	BytesPerCall  int64       `json:"bytes_per_call,omitempty"`
	ViewRows      int         `json:"view_rows,omitempty"`
	Cases         []redisCase `json:"cases,omitempty"`
	// Cluster is kvshare over a three-node cluster started beside a
	// server started for the run (redisOptions.Beside).
	Cluster *redisBeside `json:"cluster,omitempty"`
}

// redisBeside is kvshare over a cluster measured beside one node: the
// same rows, rounds and settings, each repetition's cluster round in
// turn with the one node's kvshare round.
type redisBeside struct {
	// Skipped says why no cluster was measured (no redis-cli beside the
	// binary).
	Skipped   string            `json:"skipped,omitempty"`
	Server    string            `json:"server,omitempty"`
	KeyPrefix string            `json:"key_prefix,omitempty"`
	Nodes     []string          `json:"nodes,omitempty"`
	Cases     []redisBesideCase `json:"cases,omitempty"`
}

// redisBesideCase is one row size over the cluster: kvshare's MB/s, and
// the ratio to the same repetition's kvshare MB/s over one node (the
// per-node grouping's cost). NotReady counts the rows, over every
// repetition, that did not come back Ready; Parts and PartsSplit the
// driver's parts over the case's rounds, and those whose rows lay on more
// than one node.
type redisBesideCase struct {
	RowBytes   int64  `json:"row_bytes"`
	Rows       int    `json:"rows"`
	PutMBs     spread `json:"put_mbs"`
	GetMBs     spread `json:"get_mbs"`
	PutRatio   spread `json:"put_ratio"`
	GetRatio   spread `json:"get_ratio"`
	NotReady   int    `json:"not_ready"`
	Parts      int64  `json:"parts"`
	PartsSplit int64  `json:"parts_split"`
}

// redisCase is one row size. Rates are 10⁶ bytes of Ready rows per
// second, one figure per repetition; ratios kvshare's over the floor's.
// NotReady counts the rows, over every repetition, that did not come
// back Ready (those are not counted as moved). Over a cluster, Parts and
// PartsSplit count kvshare's parts over the case's rounds, and those
// whose rows lay on more than one node.
type redisCase struct {
	RowBytes int64 `json:"row_bytes"`
	Rows     int   `json:"rows"`
	sidesMBs
	PlainPutMBs     spread `json:"plain_put_mbs"`
	PlainGetMBs     spread `json:"plain_get_mbs"`
	KvshareNotReady int    `json:"kvshare_not_ready"`
	FloorNotReady   int    `json:"floor_not_ready"`
	PlainNotReady   int    `json:"plain_not_ready"`
	Parts           int64  `json:"parts,omitempty"`
	PartsSplit      int64  `json:"parts_split,omitempty"`
}

// sidesMBs are kvshare's and its floor's MB/s each way, one figure a
// repetition, and kvshare's over the floor's.
type sidesMBs struct {
	KvsharePutMBs spread `json:"kvshare_put_mbs"`
	KvshareGetMBs spread `json:"kvshare_get_mbs"`
	FloorPutMBs   spread `json:"floor_put_mbs"`
	FloorGetMBs   spread `json:"floor_get_mbs"`
	PutRatio      spread `json:"put_ratio"`
	GetRatio      spread `json:"get_ratio"`
}

// mbsRounds gathers the rounds of kvshare and its floor at one row
// size, a pair a repetition.
type mbsRounds struct {
	rowBytes                               int64
	kvPut, kvGet, flPut, flGet, putR, getR []float64
}

// add counts one repetition's rounds (only Ready rows move bytes) and
// returns kvshare's MB/s, put and get.
func (m *mbsRounds) add(kv, fl poolRound) (kp, kg float64) {
	kp, kg = mbs(int64(kv.putReady)*m.rowBytes, kv.put), mbs(int64(kv.getReady)*m.rowBytes, kv.get)
	fp, fg := mbs(int64(fl.putReady)*m.rowBytes, fl.put), mbs(int64(fl.getReady)*m.rowBytes, fl.get)
	m.kvPut, m.kvGet, m.flPut, m.flGet = append(m.kvPut, kp), append(m.kvGet, kg), append(m.flPut, fp), append(m.flGet, fg)
	m.putR, m.getR = append(m.putR, ratio(kp, fp)), append(m.getR, ratio(kg, fg))
	return kp, kg
}

// spreads summarises the repetitions.
func (m *mbsRounds) spreads() sidesMBs {
	return sidesMBs{
		KvsharePutMBs: spreadOf(m.kvPut), KvshareGetMBs: spreadOf(m.kvGet),
		FloorPutMBs: spreadOf(m.flPut), FloorGetMBs: spreadOf(m.flGet),
		PutRatio: spreadOf(m.putR), GetRatio: spreadOf(m.getR),
	}
}

// mbs is bytes over d, in 10⁶ bytes per second.
func mbs(bytes int64, d time.Duration) float64 {
	if d <= 0 {
		return 0
	}
	return float64(bytes) / d.Seconds() / 1e6
}

// measureRedis runs measurement 7 against target (which it closes), and
// kvshare over beside as well when given (which it closes too; skipped
// says why there is none, when there is none to measure): per row size
// one unmeasured round of kvshare, of the floor and of kvshare over
// beside (the servers' memory and every connection warmed), then per
// repetition one round of kvshare and one of the floor (which goes first
// changes every repetition), the one over beside next to kvshare's
// (which of the two goes first changes too), then one of the plain loop,
// each after a collection and under fresh keys of its own prefix,
// deleted after the round.
func measureRedis(ctx context.Context, o Options, target, beside *redisTarget, skipped string, step func(string)) (*redisReport, error) {
	r, err := newRedisRig(ctx, o, target)
	if err != nil {
		if beside != nil {
			err = errors.Join(err, beside.close())
		}
		return nil, err
	}
	rep := &redisReport{
		Server: target.describe, KeyPrefix: r.prefix, BytesPerRound: o.Redis.Bytes, Workers: r.drv.Workers,
		RowsPerCall: r.caps.RowsPerCall, BytesPerCall: r.caps.BytesPerCall, ViewRows: o.Redis.ViewRows,
	}
	if r.raw.cluster() {
		rep.Nodes = r.raw.addrs
	}
	if skipped != "" {
		rep.Cluster = &redisBeside{Skipped: skipped}
	}
	if beside != nil {
		if r.beside, err = newRedisRig(ctx, o, beside); err != nil {
			return nil, errors.Join(err, r.close())
		}
		rep.Cluster = &redisBeside{Server: beside.describe, KeyPrefix: r.beside.prefix, Nodes: r.beside.raw.addrs}
	}
	for ri, rs := range o.Redis.RowSizes {
		c, bc, err := r.rowSize(ctx, ri, rs, step)
		if err != nil {
			return nil, errors.Join(err, r.close())
		}
		rep.Cases = append(rep.Cases, c)
		if r.beside != nil {
			rep.Cluster.Cases = append(rep.Cluster.Cases, bc)
		}
	}
	return rep, r.close()
}

// rowSize measures one row size (region ri of the binding), over the
// cluster beside too when there is one.
func (r *redisRig) rowSize(ctx context.Context, ri int, rowBytes int64, step func(string)) (redisCase, redisBesideCase, error) {
	n := r.o.Redis.rows(rowBytes)
	c := redisCase{RowBytes: rowBytes, Rows: n}
	bc := redisBesideCase{RowBytes: rowBytes, Rows: n}
	step(fmt.Sprintf("7 redis %s: warming", size(rowBytes)))
	round := ri * (r.o.Reps + 1)
	if _, err := r.kvshareRound(ri, round, n); err != nil {
		return c, bc, err
	}
	if _, err := r.floorRound(ri, round, n, rowBytes); err != nil {
		return c, bc, err
	}
	if r.beside != nil {
		if _, err := r.beside.kvshareRound(ri, round, n); err != nil {
			return c, bc, err
		}
	}
	parts, split := r.parts()
	bparts, bsplit := r.beside.parts()
	sides := mbsRounds{rowBytes: rowBytes}
	var plPut, plGet, clPut, clGet, clPutR, clGetR []float64
	for rep := range r.o.Reps {
		if err := ctx.Err(); err != nil {
			return c, bc, err
		}
		step(fmt.Sprintf("7 redis %s", size(rowBytes)))
		round++
		var kv, fl, pl, cl poolRound
		var kerr, ferr, perr, cerr error
		runKv := func() { runtime.GC(); kv, kerr = r.kvshareRound(ri, round, n) }
		runFl := func() { runtime.GC(); fl, ferr = r.floorRound(ri, round, n, rowBytes) }
		runCl := func() {
			if r.beside != nil {
				runtime.GC()
				cl, cerr = r.beside.kvshareRound(ri, round, n)
			}
		}
		inTurn(rep, func() { inTurn(rep, runKv, runCl) }, runFl)
		runtime.GC()
		pl, perr = r.plainRound(ri, round, n, rowBytes)
		if err := errors.Join(kerr, ferr, perr, cerr); err != nil {
			return c, bc, err
		}
		c.KvshareNotReady += 2*n - kv.putReady - kv.getReady
		c.FloorNotReady += 2*n - fl.putReady - fl.getReady
		c.PlainNotReady += 2*n - pl.putReady - pl.getReady
		kp, kg := sides.add(kv, fl)
		plPut = append(plPut, mbs(int64(pl.putReady)*rowBytes, pl.put))
		plGet = append(plGet, mbs(int64(pl.getReady)*rowBytes, pl.get))
		if r.beside != nil {
			bc.NotReady += 2*n - cl.putReady - cl.getReady
			cp, cg := mbs(int64(cl.putReady)*rowBytes, cl.put), mbs(int64(cl.getReady)*rowBytes, cl.get)
			clPut, clGet = append(clPut, cp), append(clGet, cg)
			clPutR, clGetR = append(clPutR, ratio(cp, kp)), append(clGetR, ratio(cg, kg))
		}
	}
	c.sidesMBs = sides.spreads()
	c.PlainPutMBs, c.PlainGetMBs = spreadOf(plPut), spreadOf(plGet)
	if r.raw.cluster() {
		p, sp := r.parts()
		c.Parts, c.PartsSplit = p-parts, sp-split
	}
	bc.PutMBs, bc.GetMBs = spreadOf(clPut), spreadOf(clGet)
	bc.PutRatio, bc.GetRatio = spreadOf(clPutR), spreadOf(clGetR)
	if r.beside != nil {
		p, sp := r.beside.parts()
		bc.Parts, bc.PartsSplit = p-bparts, sp-bsplit
	}
	return c, bc, nil
}

// kvshareRound publishes n rows of region ri through kvshare in views of
// ViewRows, all at once, then fetches them back into the same slots,
// then deletes what it stored.
func (r *redisRig) kvshareRound(ri, round, n int) (poolRound, error) {
	var pr poolRound
	names, ks, err := r.keys(sideKvshare, round, n)
	if err != nil {
		return pr, err
	}
	vs := views(names, n, r.o.Redis.ViewRows, 0)
	for i := range vs {
		vs[i].Groups[0].Region = ri
	}
	if pr.putReady, pr.put, err = timedCount(r.kv, contract.PutDir, vs); err != nil {
		return pr, err
	}
	pr.getReady, pr.get, err = timedCount(r.kv, contract.GetDir, vs)
	return pr, errors.Join(err, r.remove(ks, pr.putReady))
}

// floorRound sends the driver's commands for the same rows on the raw
// client, cut as kvshare cuts them, on as many goroutines as the driver
// has workers: the puts, then the gets; then deletes what it stored.
func (r *redisRig) floorRound(ri, round, n int, rowBytes int64) (poolRound, error) {
	var pr poolRound
	_, ks, err := r.keys(sideFloor, round, n)
	if err != nil {
		return pr, err
	}
	parts := r.raw.split(redisParts(ks, r.slots(ri, n, rowBytes), rowBytes, r.o.Redis.ViewRows, r.caps.RowsPerCall, r.caps.BytesPerCall))
	start := time.Now()
	pr.putReady = r.floor.run(contract.PutDir, parts)
	pr.put = time.Since(start)
	start = time.Now()
	pr.getReady = r.floor.run(contract.GetDir, parts)
	pr.get = time.Since(start)
	return pr, r.remove(ks, pr.putReady)
}

// plainRound moves the same rows with single SETs, then single GETs, on
// the raw client; then deletes what it stored.
func (r *redisRig) plainRound(ri, round, n int, rowBytes int64) (poolRound, error) {
	var pr poolRound
	_, ks, err := r.keys(sidePlain, round, n)
	if err != nil {
		return pr, err
	}
	slots := r.slots(ri, n, rowBytes)
	start := time.Now()
	pr.putReady = r.plain.run(contract.PutDir, ks, slots)
	pr.put = time.Since(start)
	start = time.Now()
	pr.getReady = r.plain.run(contract.GetDir, ks, slots)
	pr.get = time.Since(start)
	return pr, r.remove(ks, pr.putReady)
}
