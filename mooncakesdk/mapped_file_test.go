package mooncakesdk

import (
	"runtime"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestMapsLineFile(t *testing.T) {
	for _, tc := range []struct {
		line string
		addr uintptr
		want string
		ok   bool
	}{
		{"7f0000000000-7f0000001000 r-xp 00000000 08:01 1234   /usr/lib/libx.so", 0x7f0000000800, "/usr/lib/libx.so", true},
		{"7f0000000000-7f0000001000 r-xp 00000000 08:01 1234   /opt/my libs/libx.so", 0x7f0000000000, "/opt/my libs/libx.so", true},
		{"7f0000000000-7f0000001000 r-xp 00000000 08:01 1234   /usr/lib/libx.so", 0x7f0000001000, "", false},
		{"7f0000000000-7f0000001000 rw-p 00000000 00:00 0 ", 0x7f0000000800, "", false},
		{"7f0000000000-7f0000001000 rw-p 00000000 00:00 0   [heap]", 0x7f0000000800, "", false},
		{"garbage", 1, "", false},
		{"zz-10 r-xp 0 0 0 /x", 1, "", false},
	} {
		got, ok := mapsLineFile(tc.line, tc.addr)
		assert.Equal(t, tc.ok, ok, tc.line)
		assert.Equal(t, tc.want, got, tc.line)
	}
}

func TestMappedFileFindsThisBinary(t *testing.T) {
	// The address of a Go function lies in the test binary's text.
	file, err := mappedFile(funcAddr())
	require.NoError(t, err)
	assert.True(t, strings.HasPrefix(file, "/"), file)
}

func FuzzMapsLineFile(f *testing.F) {
	f.Add("7f0000000000-7f0000001000 r-xp 00000000 08:01 1234   /usr/lib/libx.so", uint64(0x7f0000000800))
	f.Add("0-ffffffffffffffff r 0 0 0 /", uint64(5))
	f.Add("1-2 r 0 0 0\t/a b", uint64(1))
	f.Fuzz(func(t *testing.T, line string, addr uint64) {
		path, ok := mapsLineFile(line, uintptr(addr))
		if ok {
			require.True(t, strings.HasPrefix(path, "/"))
			require.Equal(t, strings.TrimSpace(path), path)
			require.Contains(t, line, path)
		} else {
			require.Empty(t, path)
		}
	})
}

// funcAddr is the address of this file's code, found through the runtime.
func funcAddr() uintptr {
	pc, _, _, _ := runtime.Caller(0)
	return pc
}
