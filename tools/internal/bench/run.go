package bench

import (
	"context"
	"errors"
	"log/slog"
	"time"
)

// Progress is told, before each unit of work, how many units are done
// out of all and what comes next; once more at the end with done equal
// to total.
type Progress func(done, total int, what string)

// skippedPool is measurement 5's line (and 6's for its real-pool case)
// when no pool was given.
const skippedPool = "skipped: no pool given (--store store.toml, or --mooncake-dir DIR to start one)"

// skippedRedis is measurement 7's line when no Redis server was given.
const skippedRedis = "skipped: no Redis server given (--store redis.toml, or --redis-server PATH to start one)"

// Run runs the measurements o asks for, in order, and judges every
// goal. logger (nil: a discarding one) receives the Mooncake SDK's and
// the pool's records in measurements 5 and 6, a started Redis
// server's in 7, and the disk store's in 9. An error means a measurement
// could not run to the end (a row that never came back, a pool that
// would not start); what ran before is in the report.
func Run(ctx context.Context, o Options, progress Progress, logger *slog.Logger) (*Report, error) {
	if err := o.Validate(); err != nil {
		return nil, err
	}
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	if progress == nil {
		progress = func(int, int, string) {}
	}
	rep := &Report{Machine: thisMachine(), Reps: o.Reps}
	start := time.Now()
	total, done := units(o), 0
	step := func(what string) {
		progress(done, total, what)
		done++
	}
	defer func() {
		rep.ElapsedS = time.Since(start).Seconds()
		rep.Machine.LoadAfter = loadAverage()
		rep.judge()
		progress(total, total, "done")
	}()
	var err error
	if o.runs(SettleLatency) {
		if rep.Settle, err = measureSettle(ctx, o, step); err != nil {
			return rep, err
		}
	}
	if o.runs(EngineLoop) {
		if rep.Loop, err = measureLoop(ctx, o, step); err != nil {
			return rep, err
		}
	}
	if o.runs(RowCPU) {
		if rep.RowCPU, err = measureRowCPU(ctx, o, step); err != nil {
			return rep, err
		}
	}
	if o.runs(Bandwidth) {
		if rep.Band, err = measureBandwidth(ctx, o, step); err != nil {
			return rep, err
		}
	}
	if o.runs(RealPool) {
		if !o.poolGiven() {
			rep.Pool = &poolReport{Skipped: skippedPool}
		} else {
			step("5 real pool: opening")
			target, err := openPool(ctx, o.Pool, logger)
			if err != nil {
				return rep, err
			}
			if rep.Pool, err = measureRealPool(ctx, o, target, step); err != nil {
				return rep, err
			}
		}
	}
	if o.runs(Lookup) {
		var open func() (*poolTarget, error)
		if o.poolGiven() {
			open = func() (*poolTarget, error) { return openPool(ctx, o.Pool, logger) }
		}
		if rep.Lookup, err = measureLookup(ctx, o, open, step); err != nil {
			return rep, err
		}
	}
	if o.runs(Redis) {
		if !o.redisGiven() {
			rep.Redis = &redisReport{Skipped: skippedRedis}
		} else {
			step("7 redis: opening")
			target, err := openRedis(ctx, o.Redis, logger)
			if err != nil {
				return rep, err
			}
			var beside *redisTarget
			var skipped string
			if o.Redis.besides() {
				step("7 redis: starting a cluster beside")
				if beside, skipped, err = openBeside(ctx, o.Redis, logger); err != nil {
					return rep, errors.Join(err, target.close())
				}
			}
			if rep.Redis, err = measureRedis(ctx, o, target, beside, skipped, step); err != nil {
				return rep, err
			}
		}
	}
	if o.runs(Node) {
		var open func() (*poolTarget, error)
		if o.poolGiven() {
			open = func() (*poolTarget, error) { return openPool(ctx, o.Pool, logger) }
		}
		if rep.Node, err = measureNode(ctx, o, open, step); err != nil {
			return rep, err
		}
	}
	if o.runs(Disk) {
		if rep.Disk, err = measureDisk(ctx, o, step, logger); err != nil {
			return rep, err
		}
	}
	return rep, nil
}

// units counts the steps Run will report.
func units(o Options) int {
	n := 0
	if o.runs(SettleLatency) {
		n += o.Reps * len(settleShapes) * len(settleModes)
	}
	if o.runs(EngineLoop) {
		n += o.Reps * 3
	}
	if o.runs(RowCPU) {
		n += o.Reps * 2
	}
	if o.runs(Bandwidth) {
		n += o.Reps * len(o.Bandwidth.RowSizes)
	}
	if o.runs(RealPool) && o.poolGiven() {
		n += 2 + o.Reps*len(o.Pool.RowSizes)
	}
	if o.runs(Lookup) {
		// memdrv, then the fake SDK and the pool with a context of each
		// kind (a case of a driver that may hand a lookup aside)
		blocking := 1
		if o.poolGiven() {
			blocking, n = 2, n+1 // and opening the pool
		}
		n += (1 + 2*blocking) * len(o.Lookup.Sizes) * 2 * o.Reps
	}
	if o.runs(Redis) && o.redisGiven() {
		n += 1 + len(o.Redis.RowSizes)*(1+o.Reps)
		if o.Redis.besides() {
			n++ // starting the cluster beside
		}
	}
	if o.runs(Node) {
		n += o.Reps * (len(o.Node.Shapes) + 1)
		if o.poolGiven() {
			n += 1 + o.Reps*len(o.Pool.RowSizes) // and opening the pool
		}
	}
	if o.runs(Disk) {
		// Opening; per row size a warming round and the repetitions; the
		// lookup's two modes.
		n += 1 + len(o.Disk.RowSizes)*(1+o.Reps) + 2*o.Reps
	}
	return n
}
