package gpuroundtrip

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestRequestNames(t *testing.T) {
	r := Request{ID: 0x0102030405060708}
	assert.Equal(t, []byte{1, 2, 3, 4, 5, 6, 7, 8, 0, 0, 0, 3, 0, 0, 0, 9}, r.Name(3, 9))
	assert.Len(t, r.Name(0, 0), NameBytes)
	assert.NotEqual(t, r.Name(1, 2), r.Name(2, 1))
	assert.NotEqual(t, r.Name(0, 0), Request{ID: 1}.Name(0, 0))
}
