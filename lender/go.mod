module github.com/kvshare/kvshare/lender

go 1.26.0

require (
	github.com/kvshare/kvshare/binding v0.3.0
	github.com/kvshare/kvshare/contract v0.3.0
	github.com/kvshare/kvshare/hostmem v0.3.0
	github.com/kvshare/kvshare/memdrv v0.3.0
	github.com/kvshare/kvshare/patience v0.3.0
	github.com/stretchr/testify v1.12.1
)

require (
	github.com/kvshare/kvshare/drivekit v0.3.0 // indirect
	github.com/kvshare/kvshare/keys v0.3.0 // indirect
	github.com/kvshare/kvshare/rowbatch v0.3.0 // indirect
	github.com/kvshare/kvshare/scheduler v0.3.0 // indirect
	github.com/kvshare/kvshare/storeconfig v0.3.0 // indirect
	go.yaml.in/yaml/v3 v3.0.5 // indirect
	golang.org/x/sys v0.48.0 // indirect
)

replace (
	github.com/kvshare/kvshare/binding => ../binding
	github.com/kvshare/kvshare/contract => ../contract
	github.com/kvshare/kvshare/drivekit => ../drivekit
	github.com/kvshare/kvshare/hostmem => ../hostmem
	github.com/kvshare/kvshare/keys => ../keys
	github.com/kvshare/kvshare/memdrv => ../memdrv
	github.com/kvshare/kvshare/patience => ../patience
	github.com/kvshare/kvshare/rowbatch => ../rowbatch
	github.com/kvshare/kvshare/scheduler => ../scheduler
	github.com/kvshare/kvshare/storeconfig => ../storeconfig
)
