module github.com/kvshare/kvshare/docs/doccheck

go 1.26.0

replace github.com/kvshare/kvshare/contract => ../../contract

replace github.com/kvshare/kvshare/keys => ../../keys

replace github.com/kvshare/kvshare/rowbatch => ../../rowbatch

replace github.com/kvshare/kvshare/scheduler => ../../scheduler

replace github.com/kvshare/kvshare/hostmem => ../../hostmem

replace github.com/kvshare/kvshare/storeconfig => ../../storeconfig

replace github.com/kvshare/kvshare/loopback => ../../loopback

replace github.com/kvshare/kvshare/patience => ../../patience

replace github.com/kvshare/kvshare/binding => ../../binding

replace github.com/kvshare/kvshare/drivekit => ../../drivekit

replace github.com/kvshare/kvshare/memdrv => ../../memdrv

replace github.com/kvshare/kvshare/diskdrv => ../../diskdrv

replace github.com/kvshare/kvshare/nodewire => ../../nodewire

replace github.com/kvshare/kvshare/node => ../../node

replace github.com/kvshare/kvshare/mooncakesdk => ../../mooncakesdk

replace github.com/kvshare/kvshare/mooncakedrv => ../../mooncakedrv

replace github.com/kvshare/kvshare/redisdrv => ../../redisdrv

replace github.com/kvshare/kvshare/conformance => ../../conformance

replace github.com/kvshare/kvshare/nodeclient => ../../nodeclient

require (
	github.com/kvshare/kvshare/binding v0.3.0
	github.com/kvshare/kvshare/diskdrv v0.3.0
	github.com/kvshare/kvshare/memdrv v0.3.0
	github.com/kvshare/kvshare/mooncakedrv v0.3.0
	github.com/kvshare/kvshare/mooncakesdk v0.3.0
	github.com/kvshare/kvshare/node v0.3.0
	github.com/kvshare/kvshare/redisdrv v0.3.0
	github.com/kvshare/kvshare/storeconfig v0.3.0
	github.com/stretchr/testify v1.12.1
)

require (
	github.com/BurntSushi/toml v1.6.0 // indirect
	github.com/ebitengine/purego v0.11.3 // indirect
	github.com/kvshare/kvshare/contract v0.3.0 // indirect
	github.com/kvshare/kvshare/drivekit v0.3.0 // indirect
	github.com/kvshare/kvshare/hostmem v0.3.0 // indirect
	github.com/kvshare/kvshare/keys v0.3.0 // indirect
	github.com/kvshare/kvshare/loopback v0.3.0 // indirect
	github.com/kvshare/kvshare/nodewire v0.3.0 // indirect
	github.com/kvshare/kvshare/rowbatch v0.3.0 // indirect
	github.com/kvshare/kvshare/scheduler v0.3.0 // indirect
	github.com/redis/rueidis v1.0.79 // indirect
	go.yaml.in/yaml/v3 v3.0.5 // indirect
	golang.org/x/sys v0.48.0 // indirect
)
