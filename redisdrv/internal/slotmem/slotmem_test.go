package slotmem_test

import (
	"syscall"
	"testing"
	"unsafe"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/kvshare/kvshare/redisdrv/internal/slotmem"
)

func TestViewsShareTheMemoryAtAnAddress(t *testing.T) {
	m, err := syscall.Mmap(-1, 0, 4096, syscall.PROT_READ|syscall.PROT_WRITE, syscall.MAP_ANON|syscall.MAP_PRIVATE)
	require.NoError(t, err)
	defer func() { require.NoError(t, syscall.Munmap(m)) }()
	base := uintptr(unsafe.Pointer(unsafe.SliceData(m)))

	b := slotmem.Bytes(base+100, 8)
	copy(b, "abcdefgh")
	assert.Equal(t, []byte("abcdefgh"), m[100:108], "writes land at the address")
	s := slotmem.String(base+100, 8)
	assert.Equal(t, "abcdefgh", s)
	m[107] = 'z'
	assert.Equal(t, "abcdefgz", s, "the string shares the memory: no copy")

	assert.Nil(t, slotmem.Bytes(base, 0))
	assert.Empty(t, slotmem.String(base, -1))
}
