package engineguide_test

import (
	"crypto/sha256"
	"encoding/binary"

	"github.com/kvshare/kvshare/contract"
)

// guide:names
// blockHashes chains a hash over a request's tokens, one per full block:
// block i's hash covers every token up to the end of block i, so two
// requests that share a prefix share the names of its blocks.
func blockHashes(tokens []int32, blockTokens int) [][32]byte {
	var hashes [][32]byte
	var prev [32]byte
	for end := blockTokens; end <= len(tokens); end += blockTokens {
		h := sha256.New()
		h.Write(prev[:])
		for _, t := range tokens[end-blockTokens : end] {
			h.Write(binary.LittleEndian.AppendUint32(nil, uint32(t)))
		}
		h.Sum(prev[:0])
		hashes = append(hashes, prev)
	}
	return hashes
}

// blockName names one layer's KV block: the block's hash, then the layer.
// A name is 1 to keys.MaxNameBytes (512) opaque bytes; the backend makes
// the store key prefix/v1/<hex of the name> from it.
func blockName(hash [32]byte, layer int) []byte {
	return binary.BigEndian.AppendUint16(hash[:], uint16(layer))
}

// guide:end

// guide:view
// requestView is the view of a request's blocks: one group per layer, in
// layer order, each the layer's blocks in block order, all in region 0.
// Slot layer*maxBlocks + block holds that layer's block.
func requestView(hashes [][32]byte, layers, maxBlocks int) contract.View {
	v := contract.View{Groups: make([]contract.Group, layers)}
	for layer := range layers {
		g := &v.Groups[layer]
		for block, hash := range hashes {
			g.Slots = append(g.Slots, int32(layer*maxBlocks+block))
			g.Names = append(g.Names, blockName(hash, layer))
		}
	}
	return v
}

// guide:end
