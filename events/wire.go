package events

import (
	"encoding/binary"
	"fmt"
)

// VLLMLayout names the vLLM change whose KV-event layout the stream
// matches: the one that gave BlockStored its lora_name, its eighth field,
// while EventBatch and KVCacheEvent were msgspec array-like structs
// (events tagged by their class name, block hashes bytes | int, medium,
// the batch's data-parallel rank). vLLM's releases from that change
// until events became maps write this layout, their later fields
// (extra_keys, group_idx) left out at the end when unset.
const VLLMLayout = "vllm-project/vllm#27577"

// The names vLLM tags its events with: the first element of each.
const (
	TagBlockStored      = "BlockStored"
	TagBlockRemoved     = "BlockRemoved"
	TagAllBlocksCleared = "AllBlocksCleared"
)

// SeqBytes is the length of a sequence frame: a big-endian uint64.
const SeqBytes = 8

// endOfReplay is the sequence frame that ends a replay: -1 as a signed
// big-endian int64, with an empty payload.
var endOfReplay = []byte{0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff}

// event is one KV event as the batch carries it.
type event struct {
	tag   string
	names [][]byte
	// BlockStored only.
	blockSize uint64
	loraName  string
}

// batchEncoder writes batches in vLLM's array layout:
//
//	batch:            [ts float64, [event...], data_parallel_rank int]
//	BlockStored:      ["BlockStored", [hash bytes...], parent nil,
//	                   token_ids [], block_size int, lora_id nil,
//	                   medium str, lora_name str | nil]
//	BlockRemoved:     ["BlockRemoved", [hash bytes...], medium str]
//	AllBlocksCleared: ["AllBlocksCleared"]
type batchEncoder struct {
	medium string
	rank   uint64
}

// encode appends the msgpack of one batch of events at ts (seconds since
// the epoch) to b.
func (be batchEncoder) encode(b []byte, ts float64, evs []event) ([]byte, error) {
	b = appendArrayLen(b, 3)
	b = appendFloat64(b, ts)
	b = appendArrayLen(b, len(evs))
	for _, ev := range evs {
		switch ev.tag {
		case TagBlockStored:
			b = appendArrayLen(b, 8)
			b = appendStr(b, ev.tag)
			b = appendHashes(b, ev.names)
			b = appendNil(b)         // parent_block_hash: names are opaque to the node
			b = appendArrayLen(b, 0) // token_ids: unknown to the node
			b = appendUint(b, ev.blockSize)
			b = appendNil(b) // lora_id: vLLM's deprecated field; lora_name names the adapter
			b = appendStr(b, be.medium)
			if ev.loraName == "" {
				b = appendNil(b)
			} else {
				b = appendStr(b, ev.loraName)
			}
		case TagBlockRemoved:
			b = appendArrayLen(b, 3)
			b = appendStr(b, ev.tag)
			b = appendHashes(b, ev.names)
			b = appendStr(b, be.medium)
		case TagAllBlocksCleared:
			b = appendArrayLen(b, 1)
			b = appendStr(b, ev.tag)
		default:
			return nil, fmt.Errorf("kvshare/events: no event is tagged %q", ev.tag)
		}
	}
	return appendUint(b, be.rank), nil
}

// appendHashes appends names as the block hashes: a list of bytes.
func appendHashes(b []byte, names [][]byte) []byte {
	b = appendArrayLen(b, len(names))
	for _, n := range names {
		b = appendBin(b, n)
	}
	return b
}

// seqFrame is a sequence number as its frame carries it.
func seqFrame(seq uint64) []byte {
	return binary.BigEndian.AppendUint64(make([]byte, 0, SeqBytes), seq)
}
