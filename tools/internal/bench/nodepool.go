package bench

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/kvshare/kvshare/contract"
	"github.com/kvshare/kvshare/nodeclient"
	"github.com/kvshare/kvshare/tools/internal/poolfloor"
)

// nodePoolReport is measurement 8 over a real pool, in measurement 5's
// shapes: at each of its row sizes, its bytes a round published in views
// of its view rows, all at once, then fetched back, through a node over
// a Mooncake driver of the pool and through an in-process backend over
// a view of the same driver (a view is what the node binds each lend
// through, so the two paths differ by the socket and the node's session
// only). Rates are 10⁹ B/s of Ready rows, one a repetition; the ratios
// the node's over the in-process one's.
type nodePoolReport struct {
	Pool      string         `json:"pool"`
	KeyPrefix string         `json:"key_prefix"`
	Workers   int            `json:"workers"`
	ViewRows  int            `json:"view_rows"`
	Cases     []nodePoolCase `json:"cases"`
}

// nodePoolCase is one row size.
type nodePoolCase struct {
	RowBytes          int64  `json:"row_bytes"`
	Rows              int    `json:"rows"`
	InProcessPutGBs   spread `json:"in_process_put_gbs"`
	InProcessGetGBs   spread `json:"in_process_get_gbs"`
	NodePutGBs        spread `json:"node_put_gbs"`
	NodeGetGBs        spread `json:"node_get_gbs"`
	PutRatio          spread `json:"put_ratio"`
	GetRatio          spread `json:"get_ratio"`
	InProcessNotReady int    `json:"in_process_not_ready"`
	NodeNotReady      int    `json:"node_not_ready"`
}

// measureNodePool runs measurement 8's real-pool part against target
// (which it closes): per repetition and row size a round of each side
// under fresh keys (which side goes first alternates), each round's
// objects removed after it.
func measureNodePool(ctx context.Context, o Options, target *poolTarget, step func(string)) (*nodePoolReport, error) {
	r, err := newNodePoolRig(ctx, o, target)
	if err != nil {
		return nil, err
	}
	rep := &nodePoolReport{Pool: target.describe, KeyPrefix: r.prefix, Workers: r.workers, ViewRows: o.Pool.ViewRows}
	for ri, rs := range o.Pool.RowSizes {
		c, err := r.rowSize(ctx, ri, rs, step)
		if err != nil {
			return nil, errors.Join(err, r.close())
		}
		rep.Cases = append(rep.Cases, c)
	}
	return rep, r.close()
}

// rowSize measures one row size: region ri of the in-process lender,
// lend ri of the node's engine.
func (r *nodePoolRig) rowSize(ctx context.Context, ri int, rowBytes int64, step func(string)) (nodePoolCase, error) {
	n := int(r.o.Pool.Bytes / rowBytes)
	c := nodePoolCase{RowBytes: rowBytes, Rows: n}
	var in, nd poolSide
	var putR, getR []float64
	for rep := range r.o.Reps {
		if err := ctx.Err(); err != nil {
			return c, err
		}
		step(fmt.Sprintf("8 node over the real pool %s", size(rowBytes)))
		round := ri*r.o.Reps + rep
		var inRound, nodeRound poolRound
		var inErr, nodeErr error
		inTurn(rep,
			func() { nodeRound, nodeErr = r.nodeRound(ctx, ri, roundNames('n', round, n)) },
			func() { inRound, inErr = r.inProcessRound(ri, roundNames('i', round, n)) },
		)
		if err := errors.Join(inErr, nodeErr); err != nil {
			return c, err
		}
		ip, ig := in.add(inRound, n, rowBytes)
		np, ng := nd.add(nodeRound, n, rowBytes)
		putR, getR = append(putR, ratio(np, ip)), append(getR, ratio(ng, ig))
	}
	c.InProcessPutGBs, c.InProcessGetGBs, c.NodePutGBs, c.NodeGetGBs = spreadOf(in.put), spreadOf(in.get), spreadOf(nd.put), spreadOf(nd.get)
	c.PutRatio, c.GetRatio = spreadOf(putR), spreadOf(getR)
	c.InProcessNotReady, c.NodeNotReady = in.notReady, nd.notReady
	return c, nil
}

// inProcessRound publishes names from region ri of the in-process
// lender in views of ViewRows, all at once, then fetches them back into
// the same slots, then removes what it stored.
func (r *nodePoolRig) inProcessRound(ri int, names [][]byte) (poolRound, error) {
	var pr poolRound
	vs := views(names, len(names), r.o.Pool.ViewRows, 0)
	for i := range vs {
		vs[i].Groups[0].Region = ri
	}
	var err error
	start := time.Now()
	pr.putReady, err = submitCount(r.inproc, contract.PutDir, vs)
	pr.put = time.Since(start)
	if err == nil {
		start = time.Now()
		pr.getReady, err = submitCount(r.inproc, contract.GetDir, vs)
		pr.get = time.Since(start)
	}
	return pr, errors.Join(err, poolfloor.Remove(r.target.client, r.inStem, names, r.workers))
}

// nodeRound is inProcessRound through the node, from lend ri.
func (r *nodePoolRig) nodeRound(ctx context.Context, ri int, names [][]byte) (poolRound, error) {
	var pr poolRound
	vs := views(names, len(names), r.o.Pool.ViewRows, 0)
	var err error
	start := time.Now()
	pr.putReady, err = countThroughNode(ctx, r.lends[ri], contract.PutDir, vs)
	pr.put = time.Since(start)
	if err == nil {
		start = time.Now()
		pr.getReady, err = countThroughNode(ctx, r.lends[ri], contract.GetDir, vs)
		pr.get = time.Since(start)
	}
	return pr, errors.Join(err, poolfloor.Remove(r.target.client, r.nodeStem, names, r.workers))
}

// countThroughNode submits every view through the lend at once in
// direction dir, waits for each to quiesce and counts the rows that came
// back Ready (a full pool answers at once: those are not counted).
func countThroughNode(ctx context.Context, l *nodeclient.Lend, dir contract.Direction, vs []contract.View) (int, error) {
	attempts := make([]*nodeclient.Attempt, 0, len(vs))
	var err error
	for _, v := range vs {
		var a *nodeclient.Attempt
		if dir == contract.GetDir {
			a, err = l.Fetch(ctx, v, nodeclient.TransferOptions{})
		} else {
			a, err = l.Publish(ctx, v, nodeclient.TransferOptions{})
		}
		if err != nil {
			err = fmt.Errorf("bench: %s through the node: %w", dirName(dir), err)
			break
		}
		attempts = append(attempts, a)
	}
	ready := 0
	for _, a := range attempts { // every attempt made quiesces before the round ends
		<-a.Done()
		o, _ := a.Outcome()
		ready += delivered(o)
	}
	return ready, err
}
