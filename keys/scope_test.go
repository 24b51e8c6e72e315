package keys

// exampleScope is a valid scope with every field set: the scope of the
// package's tests.
func exampleScope() Scope {
	return Scope{
		Model: "meta-llama/Llama-3.1-8B-Instruct", Revision: "0e9e39f249a16976918f6564b8830bc894c89659",
		Adapter: "", KVDType: "fp16", Quantization: "",
		TokensPerBlock: 16, KVHeads: 8, HeadDim: 128, FirstLayer: 0, Layers: 32,
		TPRank: 0, TPSize: 1, PPRank: 0, PPSize: 1,
		HashAlgorithm: "sha256-cbor", HashSeed: "0", Tenant: "",
	}
}
