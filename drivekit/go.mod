module github.com/kvshare/kvshare/drivekit

go 1.26.0

require (
	github.com/kvshare/kvshare/contract v0.3.0
	github.com/kvshare/kvshare/rowbatch v0.3.0
	github.com/stretchr/testify v1.12.1
)

require (
	github.com/kvshare/kvshare/conformance v0.3.0
	github.com/kvshare/kvshare/patience v0.3.0 // indirect
	go.yaml.in/yaml/v3 v3.0.5 // indirect
)

replace (
	github.com/kvshare/kvshare/contract => ../contract
	github.com/kvshare/kvshare/rowbatch => ../rowbatch
)

replace github.com/kvshare/kvshare/conformance => ../conformance

replace github.com/kvshare/kvshare/patience => ../patience

replace github.com/kvshare/kvshare/memdrv => ../memdrv

replace github.com/kvshare/kvshare/keys => ../keys

replace github.com/kvshare/kvshare/hostmem => ../hostmem
