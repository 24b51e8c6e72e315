package bench

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"time"

	"github.com/kvshare/kvshare/contract"
	"github.com/kvshare/kvshare/nodeclient"
)

// nodeOptions shape measurement 8.
type nodeOptions struct {
	// Shapes are the rows of one submission, one latency case each.
	Shapes []int
	// RowBytes is the row size of the latency cases.
	RowBytes int64
	// Samples is the publish-then-fetch pairs per shape, side and
	// repetition (and as many round trips of the socket floor).
	Samples int
	// Workers is both drivers' workers.
	Workers int
	// ThroughputRowBytes is the row size of the throughput case;
	// ThroughputBytes what one of its rounds moves each way (whole rows);
	// ViewRows the rows of one of its views.
	ThroughputRowBytes int64
	ThroughputBytes    int64
	ViewRows           int
}

// nodeReport is measurement 8: the node path beside the in-process path
// in the same run, over one embedded bounded store.
type nodeReport struct {
	RowBytes int64 `json:"row_bytes"`
	Samples  int   `json:"samples_per_repetition"`
	Workers  int   `json:"workers"`
	// Latency has a case per shape and direction.
	Latency    []nodeLatencyCase `json:"latency"`
	Throughput nodeThroughput    `json:"throughput"`
	// Pool is the node over a real pool (nil when none was given: then
	// PoolSkipped says so).
	Pool        *nodePoolReport `json:"real_pool,omitempty"`
	PoolSkipped string          `json:"real_pool_skipped,omitempty"`
}

// nodeLatencyCase is one shape and direction: each side's times from
// submission to the outcome and to quiescence over every sample of the
// run, the socket floor's round trip, and per repetition the node's
// added latency (its p50 less the in-process p50) over the floor's p50.
type nodeLatencyCase struct {
	Rows              int     `json:"rows"`
	Direction         string  `json:"direction"`
	InProcessOutcome  latency `json:"in_process_outcome"`
	InProcessQuiesced latency `json:"in_process_quiesced"`
	NodeOutcome       latency `json:"node_outcome"`
	NodeQuiesced      latency `json:"node_quiesced"`
	Floor             latency `json:"socket_floor"`
	// OutcomeAdded and QuiescedAdded are the node's p50 less the
	// in-process p50 over the floor's p50, one per repetition.
	OutcomeAdded  spread `json:"outcome_added_over_floor"`
	QuiescedAdded spread `json:"quiesced_added_over_floor"`
}

// nodeThroughput is publish then fetch of ThroughputBytes of large rows
// on each side; rates in 10⁹ B/s, Ratio the node's round-trip rate over
// the in-process one's, per repetition.
type nodeThroughput struct {
	RowBytes         int64  `json:"row_bytes"`
	Rows             int    `json:"rows"`
	InProcessPublish spread `json:"in_process_publish_gbs"`
	InProcessFetch   spread `json:"in_process_fetch_gbs"`
	InProcess        spread `json:"in_process_round_trip_gbs"`
	NodePublish      spread `json:"node_publish_gbs"`
	NodeFetch        spread `json:"node_fetch_gbs"`
	Node             spread `json:"node_round_trip_gbs"`
	Ratio            spread `json:"ratio"`
}

// measureNode runs measurement 8: the latency cases, then the
// throughput case, each over a rig of its own; then, when a pool is
// given (open opens it; nil: none), the real-pool part.
func measureNode(ctx context.Context, o Options, open func() (*poolTarget, error), step func(string)) (*nodeReport, error) {
	n := o.Node
	rep := &nodeReport{RowBytes: n.RowBytes, Samples: n.Samples, Workers: n.Workers}
	var err error
	if rep.Latency, err = measureNodeLatency(ctx, o, step); err != nil {
		return nil, err
	}
	if rep.Throughput, err = measureNodeThroughput(ctx, o, step); err != nil {
		return nil, err
	}
	if open == nil {
		rep.PoolSkipped = skippedPool
		return rep, nil
	}
	step("8 node over the real pool: opening")
	target, err := open()
	if err != nil {
		return rep, err
	}
	rep.Pool, err = measureNodePool(ctx, o, target, step)
	return rep, err
}

// samples are one repetition's times of one shape and direction.
type samples struct{ inOut, inQ, nodeOut, nodeQ, floor []time.Duration }

func measureNodeLatency(ctx context.Context, o Options, step func(string)) ([]nodeLatencyCase, error) {
	n := o.Node
	most := 0
	for _, s := range n.Shapes {
		most = max(most, s)
	}
	// Rows leave slots [0, rows) and come back into [most, most+rows);
	// the store holds both sides' rows of the largest shape.
	rig, err := newNodeRig(ctx, n.RowBytes, 2*most, 2*int64(most)*n.RowBytes+64<<20, n.Workers, observed(o, Node))
	if err != nil {
		return nil, err
	}
	floor, err := newSocketFloor()
	if err != nil {
		return nil, errors.Join(err, rig.close())
	}
	names := rowNames('n', most)
	var cases []nodeLatencyCase
	// One unmeasured sample of the largest shape first: the node maps a
	// lend once and an engine's lend is long-lived, so its mapping's
	// first touch of each page is no part of a submission's time.
	runErr := nodeSample(ctx, rig, floor, 1<<62, 0, view(names, 0, most, 0), view(names, 0, most, most),
		map[contract.Direction]*samples{contract.PutDir: {}, contract.GetDir: {}})
	for _, rows := range n.Shapes {
		if runErr != nil {
			break
		}
		pub, fetch := view(names, 0, rows, 0), view(names, 0, rows, most)
		all := map[contract.Direction]*samples{contract.PutDir: {}, contract.GetDir: {}}
		added := map[contract.Direction][2][]float64{}
		for r := range o.Reps {
			step(fmt.Sprintf("8 node %d rows", rows))
			rep := map[contract.Direction]*samples{contract.PutDir: {}, contract.GetDir: {}}
			for i := range n.Samples {
				if runErr = nodeSample(ctx, rig, floor, uint64(r*n.Samples+i+1), r+i, pub, fetch, rep); runErr != nil {
					break
				}
			}
			if runErr != nil {
				break
			}
			for dir, s := range rep {
				a := all[dir]
				a.inOut, a.inQ = append(a.inOut, s.inOut...), append(a.inQ, s.inQ...)
				a.nodeOut, a.nodeQ, a.floor = append(a.nodeOut, s.nodeOut...), append(a.nodeQ, s.nodeQ...), append(a.floor, s.floor...)
				fl := float64(latencyOf(s.floor).P50Ms)
				out := ratio(latencyOf(s.nodeOut).P50Ms-latencyOf(s.inOut).P50Ms, fl)
				q := ratio(latencyOf(s.nodeQ).P50Ms-latencyOf(s.inQ).P50Ms, fl)
				pair := added[dir]
				pair[0], pair[1] = append(pair[0], out), append(pair[1], q)
				added[dir] = pair
			}
		}
		if runErr != nil {
			break
		}
		for _, dir := range []contract.Direction{contract.PutDir, contract.GetDir} {
			a := all[dir]
			cases = append(cases, nodeLatencyCase{
				Rows: rows, Direction: dirName(dir),
				InProcessOutcome: latencyOf(a.inOut), InProcessQuiesced: latencyOf(a.inQ),
				NodeOutcome: latencyOf(a.nodeOut), NodeQuiesced: latencyOf(a.nodeQ), Floor: latencyOf(a.floor),
				OutcomeAdded: spreadOf(added[dir][0]), QuiescedAdded: spreadOf(added[dir][1]),
			})
		}
	}
	return cases, errors.Join(runErr, floor.close(), rig.close())
}

// nodeSample is one publish then fetch of the view's rows on each side
// (which side goes first alternates with turn), the store emptied after
// each side, and a socket floor round trip of each frame.
func nodeSample(ctx context.Context, rig *nodeRig, floor *socketFloor, request uint64, turn int, pub, fetch contract.View, rep map[contract.Direction]*samples) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	var inErr, nodeErr error
	runIn := func() {
		runtime.GC()
		for _, x := range []struct {
			dir contract.Direction
			v   contract.View
		}{{contract.PutDir, pub}, {contract.GetDir, fetch}} {
			t, err := rig.inProcess(x.dir, x.v)
			if err != nil {
				inErr = err
				return
			}
			rep[x.dir].inOut, rep[x.dir].inQ = append(rep[x.dir].inOut, t.outcome), append(rep[x.dir].inQ, t.quiesced)
		}
		rig.store.Clear()
	}
	runNode := func() {
		runtime.GC()
		for _, x := range []struct {
			dir contract.Direction
			v   contract.View
		}{{contract.PutDir, pub}, {contract.GetDir, fetch}} {
			t, err := rig.throughNode(ctx, x.dir, x.v)
			if err != nil {
				nodeErr = err
				return
			}
			rep[x.dir].nodeOut, rep[x.dir].nodeQ = append(rep[x.dir].nodeOut, t.outcome), append(rep[x.dir].nodeQ, t.quiesced)
		}
		rig.store.Clear()
	}
	inTurn(turn, runNode, runIn)
	if err := errors.Join(inErr, nodeErr); err != nil {
		return err
	}
	for _, x := range []struct {
		dir contract.Direction
		v   contract.View
	}{{contract.PutDir, pub}, {contract.GetDir, fetch}} {
		d, err := floor.roundTrip(request, x.dir, x.v)
		if err != nil {
			return fmt.Errorf("bench: socket floor: %w", err)
		}
		rep[x.dir].floor = append(rep[x.dir].floor, d)
	}
	return nil
}

func measureNodeThroughput(ctx context.Context, o Options, step func(string)) (nodeThroughput, error) {
	n := o.Node
	rows := int(n.ThroughputBytes / n.ThroughputRowBytes)
	c := nodeThroughput{RowBytes: n.ThroughputRowBytes, Rows: rows}
	rig, err := newNodeRig(ctx, n.ThroughputRowBytes, 2*rows, int64(rows)*n.ThroughputRowBytes, n.Workers, observed(o, Node))
	if err != nil {
		return c, err
	}
	names := rowNames('t', rows)
	pub, fetch := views(names, rows, n.ViewRows, 0), views(names, rows, n.ViewRows, rows)
	moved := int64(rows) * n.ThroughputRowBytes
	var inPub, inFetch, inAll, nodePub, nodeFetch, nodeAll, ratios []float64
	inSubmit := func(dir contract.Direction, vs []contract.View) error { return submitAll(rig.inproc, dir, vs) }
	nodeSubmit := func(dir contract.Direction, vs []contract.View) error { return rig.submitAll(ctx, dir, vs) }
	// One unmeasured round a side first (the node's mapping of the lend
	// faulted in, as in the latency cases).
	_, inErr := nodeRound(inSubmit, pub, fetch)
	rig.store.Clear()
	_, nodeErr := nodeRound(nodeSubmit, pub, fetch)
	rig.store.Clear()
	runErr := errors.Join(inErr, nodeErr)
	for r := range o.Reps {
		if runErr != nil {
			break
		}
		if runErr = ctx.Err(); runErr != nil {
			break
		}
		step(fmt.Sprintf("8 node throughput %s", size(n.ThroughputRowBytes)))
		var in, nd roundTrip
		var inErr, nodeErr error
		runIn := func() {
			runtime.GC()
			in, inErr = nodeRound(inSubmit, pub, fetch)
			rig.store.Clear()
		}
		runNode := func() {
			runtime.GC()
			nd, nodeErr = nodeRound(nodeSubmit, pub, fetch)
			rig.store.Clear()
		}
		inTurn(r, runNode, runIn)
		if runErr = errors.Join(inErr, nodeErr); runErr != nil {
			break
		}
		inPub, inFetch, inAll = append(inPub, gbs(moved, in.in)), append(inFetch, gbs(moved, in.out)), append(inAll, gbs(moved, in.total()))
		nodePub, nodeFetch, nodeAll = append(nodePub, gbs(moved, nd.in)), append(nodeFetch, gbs(moved, nd.out)), append(nodeAll, gbs(moved, nd.total()))
		ratios = append(ratios, ratio(float64(in.total()), float64(nd.total())))
	}
	c.InProcessPublish, c.InProcessFetch, c.InProcess = spreadOf(inPub), spreadOf(inFetch), spreadOf(inAll)
	c.NodePublish, c.NodeFetch, c.Node = spreadOf(nodePub), spreadOf(nodeFetch), spreadOf(nodeAll)
	c.Ratio = spreadOf(ratios)
	return c, errors.Join(runErr, rig.close())
}

// nodeRound times submit of every publish view, then of every fetch
// view.
func nodeRound(submit func(contract.Direction, []contract.View) error, pub, fetch []contract.View) (roundTrip, error) {
	var rt roundTrip
	start := time.Now()
	if err := submit(contract.PutDir, pub); err != nil {
		return rt, err
	}
	rt.in = time.Since(start)
	start = time.Now()
	err := submit(contract.GetDir, fetch)
	rt.out = time.Since(start)
	return rt, err
}

// submitAll submits every view through the node at once in direction
// dir and waits for each to quiesce with every row Ready.
func (r *nodeRig) submitAll(ctx context.Context, dir contract.Direction, vs []contract.View) error {
	attempts := make([]*nodeclient.Attempt, 0, len(vs))
	for _, v := range vs {
		var a *nodeclient.Attempt
		var err error
		if dir == contract.GetDir {
			a, err = r.lend.Fetch(ctx, v, nodeclient.TransferOptions{})
		} else {
			a, err = r.lend.Publish(ctx, v, nodeclient.TransferOptions{})
		}
		if err != nil {
			return fmt.Errorf("bench: %s through the node: %w", dirName(dir), err)
		}
		attempts = append(attempts, a)
	}
	for i, a := range attempts {
		<-a.Done()
		o, _ := a.Outcome()
		if n := delivered(o); n != vs[i].Rows() {
			return fmt.Errorf("bench: %s through the node, view %d: %d of %d rows delivered (fault: %v)", dirName(dir), i, n, vs[i].Rows(), o.Fault)
		}
	}
	return nil
}
