package bench

import (
	"bytes"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/kvshare/kvshare/redisdrv/redistest"
	"github.com/kvshare/kvshare/tools/internal/redisconfig"
)

// The floor's parts are cut as kvshare cuts them: views first, then the
// driver's rows and bytes a part, a larger row alone.
func TestRedisPartsAreCutAsKvshareCutsThem(t *testing.T) {
	keys := make([]string, 10)
	slots := make([][]byte, 10)
	lens := func(parts []redisPart) []int {
		var out []int
		for _, p := range parts {
			out = append(out, len(p.keys))
			assert.Len(t, p.slots, len(p.keys))
		}
		return out
	}
	assert.Equal(t, []int{3, 1, 3, 1, 2}, lens(redisParts(keys, slots, 100, 4, 3, 1<<20)), "views of 4, parts of 3 rows")
	assert.Equal(t, []int{2, 2, 2, 2, 2}, lens(redisParts(keys, slots, 100, 10, 64, 250)), "parts of 250 bytes: 2 rows")
	assert.Equal(t, []int{1, 1, 1, 1, 1, 1, 1, 1, 1, 1}, lens(redisParts(keys, slots, 100, 10, 64, 50)), "a row over the cap goes alone")
	p := redisParts(keys, slots, 100, 10, 4, 1<<20)
	assert.Equal(t, int64(400), p[0].bytes)
}

// Measurement 7 over a given server: every row Ready, one figure a
// repetition, its goals judged, and nothing left on the server.
func TestRedisMeasurementOverAServer(t *testing.T) {
	path, s := redisconfig.ForTest(t, redistest.Options{})
	o := tiny()
	o.Only = []Measurement{Redis}
	o.Redis.StorePath = path
	var steps []string
	rep, err := Run(t.Context(), o, func(_, _ int, what string) { steps = append(steps, what) }, nil)
	require.NoError(t, err)
	d := rep.Redis
	require.NotNil(t, d)
	assert.Empty(t, d.Skipped)
	assert.Equal(t, "the Redis server of "+path+" at "+s.Addr(), d.Server)
	assert.Regexp(t, `^kvshare-test/bench/\d{8}t\d{6}z-[0-9a-f]{8}$`, d.KeyPrefix)
	assert.Equal(t, 4, d.Workers)
	assert.Equal(t, 64, d.RowsPerCall)
	assert.Len(t, steps, units(o)+1, "every unit, then done")
	require.Len(t, d.Cases, 2)
	for _, c := range d.Cases {
		assert.Equal(t, max(6, int(o.Redis.Bytes/c.RowBytes)), c.Rows)
		assert.Zero(t, c.KvshareNotReady, "every row Ready")
		assert.Zero(t, c.FloorNotReady)
		assert.Zero(t, c.PlainNotReady)
		for _, sp := range []spread{c.KvsharePutMBs, c.KvshareGetMBs, c.FloorPutMBs, c.FloorGetMBs, c.PlainPutMBs, c.PlainGetMBs, c.PutRatio, c.GetRatio} {
			assert.Equal(t, o.Reps, sp.N, "one figure a repetition")
			assert.Positive(t, sp.Median)
		}
	}
	assert.Len(t, rep.Goals, 4, "put and get at each size")
	var out bytes.Buffer
	WriteTable(&out, rep)
	for _, want := range []string{"\n7. Redis: the Redis server of " + path, "   4 KiB ", "   16 KiB ", "rows over Redis: put MB/s / the same commands pipelined"} {
		assert.Contains(t, out.String(), want)
	}

	c, err := s.Client()
	require.NoError(t, err)
	defer c.Close()
	n, err := c.Do(t.Context(), c.B().Dbsize().Build()).AsInt64()
	require.NoError(t, err)
	assert.Zero(t, n, "every side's keys are deleted after each round")
}

// With a redis-server binary the measurement starts a server of its own
// and stops it at the end.
func TestRedisMeasurementStartsAServer(t *testing.T) {
	binary := redistest.Require(t)
	o := tiny()
	o.Reps = 1
	o.Only = []Measurement{Redis}
	o.Redis.Server = binary
	o.Redis.RowSizes = []int64{4096}
	rep, err := Run(t.Context(), o, nil, nil)
	require.NoError(t, err)
	require.NotNil(t, rep.Redis)
	assert.Contains(t, rep.Redis.Server, "a loopback redis-server ")
	assert.Contains(t, rep.Redis.Server, "started from "+binary)
	assert.Contains(t, rep.Redis.Server, "maxmemory 64 MiB, noeviction")
	require.Len(t, rep.Redis.Cases, 1)
	assert.Zero(t, rep.Redis.Cases[0].KvshareNotReady)
	assert.Len(t, rep.Goals, 2)
}

func TestRedisMeasurementWithoutAServerSaysSo(t *testing.T) {
	o := tiny()
	o.Only = []Measurement{Redis}
	rep, err := Run(t.Context(), o, nil, nil)
	require.NoError(t, err)
	require.NotNil(t, rep.Redis)
	assert.Equal(t, skippedRedis, rep.Redis.Skipped)
	assert.Empty(t, rep.Goals)
	var out bytes.Buffer
	WriteTable(&out, rep)
	assert.Contains(t, out.String(), "\n7. Redis: "+skippedRedis+"\n")
}

// A server too small for a round: puts are Declined (OOM), counted apart,
// and move no bytes.
func TestRedisMeasurementCountsOnlyReadyRows(t *testing.T) {
	path, _ := redisconfig.ForTest(t, redistest.Options{MaxMemory: 4 << 20})
	o := tiny()
	o.Reps = 1
	o.Only = []Measurement{Redis}
	o.Redis.StorePath = path
	o.Redis.RowSizes = []int64{1 << 20}
	o.Redis.Bytes = 8 << 20
	rep, err := Run(t.Context(), o, nil, nil)
	require.NoError(t, err)
	c := rep.Redis.Cases[0]
	assert.Positive(t, c.KvshareNotReady, "some puts declined, their gets missed")
	assert.Positive(t, c.FloorNotReady)
	assert.Positive(t, c.PlainNotReady)
}
