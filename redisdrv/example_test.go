package redisdrv_test

import (
	"errors"
	"fmt"

	"github.com/kvshare/kvshare/redisdrv"
	"github.com/kvshare/kvshare/storeconfig"
)

// A store file names the server and how the driver cuts its work; a
// refusal names the file, the section and the key.
func ExampleParseStoreConfig() {
	sc, err := redisdrv.ParseStoreConfig("redis.toml", []byte(`
[blob]
key_prefix = "team-a"
[redis]
address = "127.0.0.1:6379"
workers = 8
`))
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(sc.Redis.Address, sc.Redis.Workers, sc.Redis.RowsPerCall, sc.Blob.KeyPrefix)

	_, err = redisdrv.ParseStoreConfig("bad.toml", []byte("[redis]\naddress = \"127.0.0.1\"\n"))
	var ce *storeconfig.Error
	fmt.Println(errors.As(err, &ce), ce.Section, ce.Key)
	// Output:
	// 127.0.0.1:6379 8 64 team-a
	// true redis address
}
