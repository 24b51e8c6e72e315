package keys_test

import (
	"errors"
	"fmt"

	"github.com/kvshare/kvshare/keys"
)

// llama is the scope of the examples: one fp16 engine on one GPU.
var llama = keys.Scope{
	Model: "meta-llama/Llama-3.1-8B-Instruct", Revision: "0e9e39f249a16976918f6564b8830bc894c89659",
	KVDType: "fp16", TokensPerBlock: 16, KVHeads: 8, HeadDim: 128, Layers: 32,
	TPSize: 1, PPSize: 1, HashAlgorithm: "sha256-cbor", HashSeed: "0",
}

func ExampleScope() {
	text, err := llama.MarshalText()
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(string(text))
	digest, err := llama.Digest()
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(digest)

	// Any one field differing makes another scope.
	fp8 := llama
	fp8.KVDType = "fp8_e4m3"
	other, _ := fp8.Digest()
	fmt.Println(other != digest)

	// A broken rule is named by its field.
	bad := llama
	bad.TPRank = 1
	err = bad.Validate()
	fmt.Println(err)
	var se *keys.ScopeError
	fmt.Println(errors.Is(err, keys.ErrInvalidScope), errors.As(err, &se) && se.Field == "tp_rank")
	// Output:
	// kvscope1;32:meta-llama/Llama-3.1-8B-Instruct,40:0e9e39f249a16976918f6564b8830bc894c89659,0:,4:fp16,0:,2:16,1:8,3:128,1:0,2:32,1:0,1:1,1:0,1:1,11:sha256-cbor,1:0,0:,
	// 69f71f82cda599785e86ef0a964309a4
	// true
	// keys: invalid scope: tp_rank: 1, want below tp_size (1)
	// true true
}

func ExampleNewScopedStem() {
	stem, err := keys.NewScopedStem("kvshare/llama-3.1-8b", llama)
	if err != nil {
		fmt.Println(err)
		return
	}
	key, err := stem.Key([]byte("row-0"))
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(key)

	// ParseKey gives back the prefix, the scope's digest and the name.
	back, name, err := keys.ParseKey(key)
	if err != nil {
		fmt.Println(err)
		return
	}
	digest, scoped := back.Scope()
	fmt.Println(back.Prefix(), digest, scoped, string(name), back == stem)

	_, err = keys.NewScopedStem("kvshare", keys.Scope{})
	fmt.Println(errors.Is(err, keys.ErrInvalidScope))
	// Output:
	// kvshare/llama-3.1-8b/s1-69f71f82cda599785e86ef0a964309a4/v1/726f772d30
	// kvshare/llama-3.1-8b 69f71f82cda599785e86ef0a964309a4 true row-0 true
	// true
}
