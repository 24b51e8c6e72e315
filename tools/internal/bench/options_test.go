package bench

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/kvshare/kvshare/tools/internal/roundtrip"
)

func TestDefaultsAndShortAreValid(t *testing.T) {
	require.NoError(t, Defaults().Validate())
	require.NoError(t, Short().Validate())
	require.NoError(t, tiny().Validate())
	assert.Less(t, Short().Reps, Defaults().Reps)
	assert.Equal(t, Defaults().Bandwidth.RowSizes, []int64{64 << 10, 256 << 10, 1 << 20, 4 << 20})
	assert.Equal(t, []int{1, 256, 4096}, Defaults().Lookup.Sizes)
	assert.Equal(t, Defaults().Lookup.Sizes, Short().Lookup.Sizes, "the same shapes")
	assert.Less(t, Short().Lookup.Block, Defaults().Lookup.Block)
	r := Defaults().Redis
	assert.Equal(t, []int64{64 << 10, 256 << 10, 1 << 20, 4 << 20}, r.RowSizes)
	assert.Equal(t, []int{1024, 256, 64, 16}, []int{r.rows(64 << 10), r.rows(256 << 10), r.rows(1 << 20), r.rows(4 << 20)},
		"64 MiB a direction, at least 16 rows")
	assert.Equal(t, 16, r.rows(16<<20), "never fewer than 16 rows")
	assert.Equal(t, roundtrip.Defaults().ViewRows, Defaults().Pool.RoundtripViewRows, "measurement 5's roundtrip-shaped views are the round trip's")
	d := Defaults().Disk
	assert.Equal(t, []int64{64 << 10, 256 << 10, 1 << 20}, d.RowSizes, "the issue's rows")
	assert.Equal(t, d.RowSizes, Short().Disk.RowSizes, "the same shapes")
	assert.Equal(t, 4096, d.LookupNames)
	assert.Equal(t, []int{2048, 512, 128}, []int{d.rows(64 << 10), d.rows(256 << 10), d.rows(1 << 20)}, "128 MiB a direction")
}

func TestValidateNamesWhatIsWrong(t *testing.T) {
	for want, edit := range map[string]func(*Options){
		"reps is 0":                  func(o *Options) { o.Reps = 0 },
		"no measurement 10 (1–9)":    func(o *Options) { o.Only = []Measurement{10} },
		"disk settings out of range": func(o *Options) { o.Disk.ViewRows = 0 },
		"disk: row size 0":           func(o *Options) { o.Disk.RowSizes = []int64{0} },
		"disk: lookup of 6 names":    func(o *Options) { o.Disk.LookupNames = 6 },
		"node settings out of range": func(o *Options) { o.Node.Samples = 0 },
		"node: a shape of 9000 rows": func(o *Options) { o.Node.Shapes = []int{256, 9000} },
		"settle settings":            func(o *Options) { o.Settle.Workers = 0 },
		"loop settings":              func(o *Options) { o.Loop.Window = 0 },
		"row cpu settings":           func(o *Options) { o.RowCPU.Rows = 0 },
		"bandwidth: row size":        func(o *Options) { o.Bandwidth.RowSizes = []int64{1 << 40} },
		"not both":                   func(o *Options) { o.Pool.StorePath, o.Pool.MooncakeDir = "a.toml", "/m" },
		"real pool: row size -1":     func(o *Options) { o.Pool.RowSizes = []int64{-1} },
		"real pool settings":         func(o *Options) { o.Pool.RoundtripViewRows = 0 },
		"lookup settings":            func(o *Options) { o.Lookup.Block = 0 },
		"lookup: 6 names":            func(o *Options) { o.Lookup.Sizes = []int{1, 6} },
		"lookup: 0 names":            func(o *Options) { o.Lookup.Sizes = []int{0} },
		"lookup: 131072 names":       func(o *Options) { o.Lookup.Sizes = []int{1 << 17} },
		"Redis store file or a redis-server binary, not both":    func(o *Options) { o.Redis.StorePath, o.Redis.Server = "r.toml", "/usr/bin/redis-server" },
		"redis settings out of range":                            func(o *Options) { o.Redis.MinRows = 0 },
		"redis: row size 1073741824":                             func(o *Options) { o.Redis.RowSizes = []int64{1 << 30} },
		"redis: row size 0":                                      func(o *Options) { o.Redis.RowSizes = []int64{0} },
		"redis: a cluster is started from a redis-server binary": func(o *Options) { o.Redis.Cluster = true },
	} {
		o := Defaults()
		edit(&o)
		err := o.Validate()
		require.Error(t, err, want)
		assert.Contains(t, err.Error(), want)
	}
}

func TestRuns(t *testing.T) {
	o := Defaults()
	assert.True(t, o.runs(RealPool))
	o.Only = []Measurement{RowCPU}
	assert.True(t, o.runs(RowCPU))
	assert.False(t, o.runs(SettleLatency))
	assert.False(t, o.runs(Lookup))
	assert.Equal(t, "lookup", Lookup.String())
	assert.Equal(t, "redis", Redis.String())
	assert.Equal(t, "node", Node.String())
	assert.Equal(t, "disk", Disk.String())
	assert.Equal(t, Disk, AllMeasurements[len(AllMeasurements)-1])
	assert.Len(t, AllMeasurements, 9)
	for i, m := range AllMeasurements {
		assert.Equal(t, Measurement(i+1), m, "numbered 1 to 9 in order")
	}
	assert.False(t, o.poolGiven())
	o.Pool.StorePath = "store.toml"
	assert.True(t, o.poolGiven())
	assert.False(t, o.redisGiven(), "a Mooncake pool is no Redis server")
	o.Redis.Server = "/usr/bin/redis-server"
	assert.True(t, o.redisGiven())
	assert.True(t, o.Redis.besides(), "a cluster beside a server started for the run")
	o.Redis.Cluster = true
	assert.False(t, o.Redis.besides(), "the cluster alone")
	o.Redis.Cluster, o.Redis.Server, o.Redis.StorePath = false, "", "redis.toml"
	assert.False(t, o.Redis.besides(), "nothing beside a store file")
}
