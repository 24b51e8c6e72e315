package mooncakesdk

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// CheckTransfer accepts well-formed arguments (a zero buffer only for a
// zero size) and names the first bad index, the key after a good one
// included.
func TestCheckTransfer(t *testing.T) {
	for _, tc := range []struct {
		name  string
		keys  []string
		bufs  []uintptr
		sizes []uint64
		want  string // "" for no error
	}{
		{"well formed", []string{"a", "b"}, []uintptr{1, 2}, []uint64{4, 4}, ""},
		{"a zero buffer for zero bytes", []string{"a", "b"}, []uintptr{1, 0}, []uint64{4, 0}, ""},
		{"a zero buffer for bytes, after a good row", []string{"a", "b"}, []uintptr{1, 0}, []uint64{4, 4}, "key 1 (\"b\"): buffer address 0 for 4 bytes"},
		{"an empty key after a good one", []string{"a", ""}, []uintptr{1, 2}, []uint64{4, 4}, "key 1 is empty"},
		{"a NUL as a key's first byte", []string{"\x00a"}, []uintptr{1}, []uint64{4}, "key 0 (\"\\x00a\") holds a NUL byte"},
		{"a NUL inside a later key", []string{"a", "b\x00"}, []uintptr{1, 2}, []uint64{4, 4}, "key 1 (\"b\\x00\") holds a NUL byte"},
		{"lengths that differ", []string{"a", "b"}, []uintptr{1}, []uint64{4, 4}, "2 keys, 1 buffers, 2 sizes, 2 results"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := CheckTransfer(tc.keys, tc.bufs, tc.sizes, make([]int64, len(tc.keys)))
			if tc.want == "" {
				assert.NoError(t, err)
				return
			}
			require.ErrorIs(t, err, ErrInvalidArgument)
			assert.Contains(t, err.Error(), tc.want)
		})
	}
}

// CheckExist checks every key, the one after a good key included.
func TestCheckExist(t *testing.T) {
	require.NoError(t, CheckExist([]string{"a", "b"}, make([]int32, 2)))
	err := CheckExist([]string{"a", "b\x00"}, make([]int32, 2))
	require.ErrorIs(t, err, ErrInvalidArgument)
	assert.Contains(t, err.Error(), "key 1")
	err = CheckExist([]string{"a"}, make([]int32, 2))
	require.ErrorIs(t, err, ErrInvalidArgument)
	assert.Contains(t, err.Error(), "1 keys, 2 results")
}
