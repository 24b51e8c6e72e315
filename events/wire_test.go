package events

import (
	"encoding/hex"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A batch's bytes, written out from the msgpack specification by hand:
// vLLM's array layout, each kind in its shortest form.
func TestBatchBytes(t *testing.T) {
	be := batchEncoder{medium: "kvshare:redis", rank: 3}
	got, err := be.encode(nil, 1.5, []event{
		{tag: TagAllBlocksCleared},
		{tag: TagBlockStored, names: [][]byte{{0xab}, {0x01, 0x02}}, blockSize: 256, loraName: "sql"},
		{tag: TagBlockRemoved, names: [][]byte{{0xab}}},
		{tag: TagBlockStored, names: nil, blockSize: 16},
	})
	require.NoError(t, err)
	want := strings.Join([]string{
		"93",                 // [ts, events, rank]
		"cb3ff8000000000000", // 1.5 as float64
		"94",                 // four events
		"91", "b0" + hex.EncodeToString([]byte("AllBlocksCleared")),
		"98", "ab" + hex.EncodeToString([]byte("BlockStored")),
		"92", "c401ab", "c4020102", // block hashes: bytes
		"c0",     // parent_block_hash nil
		"90",     // token_ids []
		"cd0100", // block_size 256
		"c0",     // lora_id nil
		"ad" + hex.EncodeToString([]byte("kvshare:redis")),
		"a3" + hex.EncodeToString([]byte("sql")),
		"93", "ac" + hex.EncodeToString([]byte("BlockRemoved")), "91", "c401ab",
		"ad" + hex.EncodeToString([]byte("kvshare:redis")),
		"98", "ab" + hex.EncodeToString([]byte("BlockStored")), "90", "c0", "90", "10", "c0",
		"ad" + hex.EncodeToString([]byte("kvshare:redis")), "c0", // no adapter: lora_name nil
		"03", // data_parallel_rank
	}, "")
	assert.Equal(t, want, hex.EncodeToString(got))
	_, err = be.encode(nil, 0, []event{{tag: "BlockMoved"}})
	assert.ErrorContains(t, err, `no event is tagged "BlockMoved"`)
}

// Every length switches to its longer form at the specification's
// bounds.
func TestMsgpackForms(t *testing.T) {
	for _, c := range []struct {
		name string
		got  []byte
		head string
	}{
		{"uint 127", appendUint(nil, 127), "7f"},
		{"uint 128", appendUint(nil, 128), "cc80"},
		{"uint 65536", appendUint(nil, 65536), "ce00010000"},
		{"uint 2^32", appendUint(nil, 1<<32), "cf0000000100000000"},
		{"array 15", appendArrayLen(nil, 15), "9f"},
		{"array 16", appendArrayLen(nil, 16), "dc0010"},
		{"array 65536", appendArrayLen(nil, 65536), "dd00010000"},
		{"str 31", appendStr(nil, strings.Repeat("a", 31)), "bf"},
		{"str 32", appendStr(nil, strings.Repeat("a", 32)), "d920"},
		{"str 256", appendStr(nil, strings.Repeat("a", 256)), "da0100"},
		{"bin 256", appendBin(nil, make([]byte, 256)), "c50100"},
		{"bin 65536", appendBin(nil, make([]byte, 65536)), "c600010000"},
	} {
		t.Run(c.name, func(t *testing.T) {
			assert.True(t, strings.HasPrefix(hex.EncodeToString(c.got), c.head), "%x…", c.got[:min(len(c.got), 9)])
		})
	}
}
