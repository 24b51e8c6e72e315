package keys_test

import (
	"errors"
	"fmt"

	"github.com/kvshare/kvshare/keys"
)

func ExampleNewStem() {
	stem, err := keys.NewStem("kvshare/llama-3.1-8b")
	if err != nil {
		fmt.Println(err)
		return
	}
	key, err := stem.Key([]byte{0x00, 0x2a, 0xff})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(key)

	_, err = keys.NewStem("kvshare//llama")
	fmt.Println(err)
	fmt.Println(errors.Is(err, keys.ErrInvalidPrefix))
	// Output:
	// kvshare/llama-3.1-8b/v1/002aff
	// keys: invalid prefix "kvshare//llama": empty segment: '/' at offset 8 follows '/'
	// true
}

func ExampleStem_Keys() {
	stem, err := keys.NewStem("kv")
	if err != nil {
		fmt.Println(err)
		return
	}
	names := [][]byte{[]byte("row-0"), []byte("row-1")}
	batch, err := stem.Keys(nil, names)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(batch)

	// A bad name is reported by index, and dst comes back as it was.
	batch, err = stem.Keys(batch[:0], [][]byte{[]byte("row-2"), nil})
	fmt.Println(len(batch), err)
	// Output:
	// [kv/v1/726f772d30 kv/v1/726f772d31]
	// 0 keys: invalid name: name 1: empty
}

func ExampleParseKey() {
	stem, name, err := keys.ParseKey("kvshare/llama-3.1-8b/v1/726f772d30")
	if err != nil {
		fmt.Println(err)
		return
	}
	_, scoped := stem.Scope()
	fmt.Printf("%s %q scoped=%v\n", stem.Prefix(), name, scoped)

	_, _, err = keys.ParseKey("kvshare/v1/726F")
	fmt.Println(err)
	fmt.Println(errors.Is(err, keys.ErrInvalidKey))
	// Output:
	// kvshare/llama-3.1-8b "row-0" scoped=false
	// keys: invalid key "kvshare/v1/726F": byte 'F' (0x46) at offset 14 is not a lowercase hex digit (0-9 a-f)
	// true
}
