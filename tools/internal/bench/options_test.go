package bench

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
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
}

func TestValidateNamesWhatIsWrong(t *testing.T) {
	for want, edit := range map[string]func(*Options){
		"reps is 0":              func(o *Options) { o.Reps = 0 },
		"no measurement 7 (1–6)": func(o *Options) { o.Only = []Measurement{7} },
		"settle settings":        func(o *Options) { o.Settle.Workers = 0 },
		"loop settings":          func(o *Options) { o.Loop.Window = 0 },
		"row cpu settings":       func(o *Options) { o.RowCPU.Rows = 0 },
		"bandwidth: row size":    func(o *Options) { o.Bandwidth.RowSizes = []int64{1 << 40} },
		"not both":               func(o *Options) { o.Pool.StorePath, o.Pool.MooncakeDir = "a.toml", "/m" },
		"real pool: row size -1": func(o *Options) { o.Pool.RowSizes = []int64{-1} },
		"lookup settings":        func(o *Options) { o.Lookup.Block = 0 },
		"lookup: 6 names":        func(o *Options) { o.Lookup.Sizes = []int{1, 6} },
		"lookup: 0 names":        func(o *Options) { o.Lookup.Sizes = []int{0} },
		"lookup: 131072 names":   func(o *Options) { o.Lookup.Sizes = []int{1 << 17} },
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
	assert.Equal(t, Lookup, AllMeasurements[len(AllMeasurements)-1])
	assert.Len(t, AllMeasurements, 6)
	assert.False(t, o.poolGiven())
	o.Pool.StorePath = "store.toml"
	assert.True(t, o.poolGiven())
}
