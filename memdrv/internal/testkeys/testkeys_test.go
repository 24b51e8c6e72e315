package testkeys_test

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/kvshare/kvshare/contract"
	"github.com/kvshare/kvshare/memdrv/internal/testkeys"
)

var _ contract.KeyMaker = testkeys.Plain{}

func TestPlain(t *testing.T) {
	tests := []struct {
		name string
		p    testkeys.Plain
		in   string
		want string
	}{
		{"no prefix", testkeys.Plain{}, "k", "k"},
		{"prefix", testkeys.Plain{Prefix: "ns/"}, "block-7", "ns/block-7"},
		{"empty name", testkeys.Plain{Prefix: "ns/"}, "", ""},
		{"within the limit", testkeys.Plain{MaxName: 3}, "abc", "abc"},
		{"over the limit", testkeys.Plain{MaxName: 3}, "abcd", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dst := []byte("old|")
			got := tt.p.AppendKey(dst, []byte(tt.in))
			assert.Equal(t, "old|"+tt.want, string(got), "appended to dst")
			assert.Equal(t, len(tt.want), tt.p.KeyLen(len(tt.in)), "KeyLen is exact")
		})
	}
	buf := make([]byte, 0, 16)
	assert.Zero(t, testing.AllocsPerRun(10, func() { buf = testkeys.Plain{Prefix: "p/"}.AppendKey(buf[:0], []byte("name")) }),
		"no allocation when dst has room")
}
