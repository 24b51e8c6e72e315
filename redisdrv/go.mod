module github.com/kvshare/kvshare/redisdrv

go 1.26.0

require (
	github.com/kvshare/kvshare/conformance v0.3.0
	github.com/kvshare/kvshare/contract v0.3.0
	github.com/kvshare/kvshare/drivekit v0.3.0
	github.com/kvshare/kvshare/keys v0.3.0
	github.com/kvshare/kvshare/loopback v0.3.0
	github.com/kvshare/kvshare/patience v0.3.0
	github.com/kvshare/kvshare/scheduler v0.3.0
	github.com/kvshare/kvshare/storeconfig v0.3.0
	github.com/redis/rueidis v1.0.79
	github.com/stretchr/testify v1.12.1
)

require (
	github.com/BurntSushi/toml v1.6.0 // indirect
	github.com/kvshare/kvshare/rowbatch v0.3.0 // indirect
	go.yaml.in/yaml/v3 v3.0.5 // indirect
	golang.org/x/sys v0.48.0 // indirect
)

replace (
	github.com/kvshare/kvshare/binding => ../binding
	github.com/kvshare/kvshare/conformance => ../conformance
	github.com/kvshare/kvshare/contract => ../contract
	github.com/kvshare/kvshare/hostmem => ../hostmem
	github.com/kvshare/kvshare/keys => ../keys
	github.com/kvshare/kvshare/loopback => ../loopback
	github.com/kvshare/kvshare/memdrv => ../memdrv
	github.com/kvshare/kvshare/rowbatch => ../rowbatch
	github.com/kvshare/kvshare/scheduler => ../scheduler
	github.com/kvshare/kvshare/storeconfig => ../storeconfig
)

replace github.com/kvshare/kvshare/patience => ../patience

replace github.com/kvshare/kvshare/drivekit => ../drivekit
