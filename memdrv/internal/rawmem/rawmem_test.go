//go:build unix

package rawmem_test

import (
	"syscall"
	"testing"
	"unsafe"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/kvshare/kvshare/memdrv/internal/rawmem"
)

func TestAtViewsTheMemoryAtAnAddress(t *testing.T) {
	m, err := syscall.Mmap(-1, 0, 4096, syscall.PROT_READ|syscall.PROT_WRITE, syscall.MAP_ANON|syscall.MAP_PRIVATE)
	require.NoError(t, err)
	defer func() { require.NoError(t, syscall.Munmap(m)) }()
	base := uintptr(unsafe.Pointer(unsafe.SliceData(m)))

	v := rawmem.At(base+100, 8)
	require.Len(t, v, 8)
	copy(v, "abcdefgh")
	assert.Equal(t, []byte("abcdefgh"), m[100:108], "writes land at the address")
	m[107] = 'z'
	assert.Equal(t, byte('z'), v[7], "and reads see the memory")

	assert.Nil(t, rawmem.At(base, 0))
	assert.Nil(t, rawmem.At(base, -1))
}
