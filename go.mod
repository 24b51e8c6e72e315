module github.com/kvshare/kvshare

go 1.26.0

require (
	github.com/kvshare/kvshare/patience v0.3.0
	github.com/kvshare/kvshare/redisdrv v0.3.0
	github.com/magefile/mage v1.17.2
	github.com/stretchr/testify v1.12.1
	golang.org/x/mod v0.41.0
)

require (
	github.com/BurntSushi/toml v1.6.0 // indirect
	github.com/kvshare/kvshare/loopback v0.3.0 // indirect
	github.com/redis/rueidis v1.0.79 // indirect
	go.yaml.in/yaml/v3 v3.0.5 // indirect
	golang.org/x/exp/typeparams v0.0.0-20231108232855-2478ac86f678 // indirect
	golang.org/x/sync v0.23.0 // indirect
	golang.org/x/sys v0.48.0 // indirect
	golang.org/x/tools v0.51.0 // indirect
	honnef.co/go/tools v0.8.2 // indirect
)

tool (
	github.com/magefile/mage
	honnef.co/go/tools/cmd/staticcheck
)

replace (
	github.com/kvshare/kvshare/binding => ./binding
	github.com/kvshare/kvshare/conformance => ./conformance
	github.com/kvshare/kvshare/contract => ./contract
	github.com/kvshare/kvshare/hostmem => ./hostmem
	github.com/kvshare/kvshare/keys => ./keys
	github.com/kvshare/kvshare/loopback => ./loopback
	github.com/kvshare/kvshare/memdrv => ./memdrv
	github.com/kvshare/kvshare/patience => ./patience
	github.com/kvshare/kvshare/redisdrv => ./redisdrv
	github.com/kvshare/kvshare/rowbatch => ./rowbatch
	github.com/kvshare/kvshare/scheduler => ./scheduler
	github.com/kvshare/kvshare/storeconfig => ./storeconfig
)
