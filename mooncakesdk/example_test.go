package mooncakesdk_test

import (
	"errors"
	"fmt"
	"strconv"

	"github.com/kvshare/kvshare/mooncakesdk"
)

func ExampleLoadStoreConfig() {
	cfg, err := mooncakesdk.LoadStoreConfig("testdata/store.toml")
	if err != nil {
		fmt.Println(err)
		return
	}
	m := cfg.Mooncake
	fmt.Println("key prefix:", cfg.Blob.KeyPrefix)
	fmt.Println("master:", m.Master, "over", m.Protocol)
	fmt.Println("parts:", m.Workers, "workers,", m.RowsPerCall, "rows,", m.BytesPerCall>>20, "MiB")
	fmt.Println("pinned hashes:", len(m.SDKSHA256))
	// Output:
	// key prefix: kv/llama-3-8b
	// master: 127.0.0.1:50051 over tcp
	// parts: 4 workers, 256 rows, 128 MiB
	// pinned hashes: 1
}

func ExampleParseStoreConfig_refused() {
	_, err := mooncakesdk.ParseStoreConfig("store.toml", []byte(`
[mooncake]
master = ["10.0.0.1:50051", "10.0.0.2:50051"]
metadata_server = "P2PHANDSHAKE"
local_hostname = "10.0.0.7"
bytes_per_call = 1.28e+8
`))
	var ce *mooncakesdk.ConfigError
	if errors.As(err, &ce) {
		fmt.Println("first refusal:", ce.Section, ce.Key)
	}
	fmt.Println(err)
	// Output:
	// first refusal: mooncake master
	// store config store.toml: [mooncake] master: an HA master list is not supported: give one host:port
	// store config store.toml: [mooncake] bytes_per_call: wants an integer, got a float (1.28e+08)
}

func ExampleCheckEnvironment() {
	env := map[string]string{"MC_TCP_PROTO": "1", "MC_STORE_LOCAL_HOT_CACHE_SIZE": "0"}
	err := mooncakesdk.CheckEnvironment(func(k string) (string, bool) {
		v, ok := env[k]
		return v, ok
	})
	fmt.Println(errors.Is(err, mooncakesdk.ErrEnvironment))
	fmt.Println(err)
	// Output:
	// true
	// mooncakesdk: environment refused: MC_TCP_PROTO=1 selects legacy TCP framing, which reports a write before it lands; unset it
}

func ExampleCode_String() {
	results := []int64{1 << 20, -704, -800}
	for _, r := range results {
		fmt.Println(mooncakesdk.Code(r))
	}
	// Output:
	// Code(1048576)
	// OBJECT_NOT_FOUND(-704)
	// TRANSFER_FAIL(-800)
}

func ExampleKeyList() {
	// A driver writes each key straight into the list's buffer: no Go
	// string per key, and no allocation once the buffer has grown.
	var kl mooncakesdk.KeyList
	for _, row := range []int{7, 42} {
		if err := kl.Add(strconv.AppendInt(append(kl.Tail(), "kv/row/"...), int64(row), 10)); err != nil {
			fmt.Println(err)
			return
		}
	}
	fmt.Println(kl.Len(), "keys:", string(kl.Key(0)), string(kl.Key(1)))
	fmt.Printf("as C takes them: %q\n", kl.Tail())

	err := kl.Add(kl.Tail()) // nothing appended
	fmt.Println(errors.Is(err, mooncakesdk.ErrInvalidArgument), err)
	// Output:
	// 2 keys: kv/row/7 kv/row/42
	// as C takes them: "kv/row/7\x00kv/row/42\x00"
	// true mooncakesdk: invalid argument: key 2 is empty (the buffer holds 19 bytes, not more than the 19 already packed)
}
