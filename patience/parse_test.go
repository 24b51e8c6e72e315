package patience

import (
	"errors"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestParseScale(t *testing.T) {
	good := map[string]float64{"": 1, " ": 1, "1": 1, "2.5": 2.5, "0.5": 0.5, "1000": 1000, " 3 ": 3}
	for in, want := range good {
		got, err := ParseScale(in)
		require.NoError(t, err, "%q", in)
		assert.Equal(t, want, got, "%q", in)
	}
	for _, in := range []string{"0", "-1", "abc", "NaN", "Inf", "1001", "1e400", "2x", "0x10p-2000"} {
		_, err := ParseScale(in)
		require.Error(t, err, "%q", in)
		assert.ErrorIs(t, err, ErrBadScale)
		assert.Contains(t, err.Error(), EnvScale)
		assert.Contains(t, err.Error(), strconv.Quote(in))
	}
}

func TestScaledBy(t *testing.T) {
	assert.Equal(t, 15*time.Second, ScaledBy(10*time.Second, 1.5))
	assert.Equal(t, time.Duration(1<<63-1), ScaledBy(time.Duration(1<<62), 1000))
}

func TestParseSchedstat(t *testing.T) {
	d, ok := ParseSchedstat([]byte("6718290 20372328 3\n"))
	require.True(t, ok)
	assert.Equal(t, 20372328*time.Nanosecond, d)
	for _, bad := range []string{"", "1 2", "a b c", "1 -2 3", "1 2 x", "1 99999999999999999999 3"} {
		_, ok := ParseSchedstat([]byte(bad))
		assert.False(t, ok, "%q", bad)
	}
}

func TestParsePressure(t *testing.T) {
	d, ok := ParsePressure([]byte("some avg10=52.16 avg60=24.42 avg300=6.70 total=22548238\nfull avg10=0.00 avg60=0.00 avg300=0.00 total=0\n"))
	require.True(t, ok)
	assert.Equal(t, 22548238*time.Microsecond, d)
	for _, bad := range []string{"", "full total=3", "some avg10=1", "some total=x", "some total=-1", "some total=99999999999999999"} {
		_, ok := ParsePressure([]byte(bad))
		assert.False(t, ok, "%q", bad)
	}
}

func FuzzParseScale(f *testing.F) {
	for _, s := range []string{"", "1", "2.5", "-1", "NaN", "1e400"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		v, err := ParseScale(s)
		if err != nil {
			if !errors.Is(err, ErrBadScale) {
				t.Fatalf("%q: error %v does not wrap ErrBadScale", s, err)
			}
			return
		}
		if !(v > 0 && v <= MaxScale) {
			t.Fatalf("%q: accepted %v", s, v)
		}
	})
}

func FuzzParseSchedstat(f *testing.F) {
	for _, s := range []string{"6718290 20372328 3\n", "", "1 2", "1 2 3 4"} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		if d, ok := ParseSchedstat(data); ok && d < 0 {
			t.Fatalf("%q: negative delay %v", data, d)
		}
	})
}

func FuzzParsePressure(f *testing.F) {
	for _, s := range []string{"some avg10=0.00 avg60=0.00 avg300=0.00 total=22548238\n", "", "some total=1"} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		if d, ok := ParsePressure(data); ok && d < 0 {
			t.Fatalf("%q: negative total %v", data, d)
		}
	})
}
