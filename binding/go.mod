module github.com/kvshare/kvshare/binding

go 1.26.0

require (
	github.com/kvshare/kvshare/contract v0.3.0
	github.com/kvshare/kvshare/keys v0.3.0
	github.com/kvshare/kvshare/memdrv v0.3.0
	github.com/kvshare/kvshare/rowbatch v0.3.0
	github.com/kvshare/kvshare/storeconfig v0.3.0
	github.com/stretchr/testify v1.12.1
)

require (
	github.com/kvshare/kvshare/scheduler v0.3.0 // indirect
	golang.org/x/sys v0.48.0 // indirect
)

require (
	github.com/kvshare/kvshare/drivekit v0.3.0 // indirect
	github.com/kvshare/kvshare/hostmem v0.3.0
	github.com/kvshare/kvshare/patience v0.3.0
	go.yaml.in/yaml/v3 v3.0.5 // indirect
)

replace github.com/kvshare/kvshare/contract => ../contract

replace github.com/kvshare/kvshare/keys => ../keys

replace github.com/kvshare/kvshare/rowbatch => ../rowbatch

replace github.com/kvshare/kvshare/memdrv => ../memdrv

replace github.com/kvshare/kvshare/storeconfig => ../storeconfig

replace github.com/kvshare/kvshare/hostmem => ../hostmem

replace github.com/kvshare/kvshare/patience => ../patience

replace github.com/kvshare/kvshare/drivekit => ../drivekit

replace github.com/kvshare/kvshare/scheduler => ../scheduler
