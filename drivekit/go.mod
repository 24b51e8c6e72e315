module github.com/kvshare/kvshare/drivekit

go 1.26.0

require (
	github.com/kvshare/kvshare/contract v0.3.0
	github.com/kvshare/kvshare/rowbatch v0.3.0
	github.com/kvshare/kvshare/scheduler v0.3.0
	github.com/stretchr/testify v1.12.1
)

require go.yaml.in/yaml/v3 v3.0.5 // indirect

replace (
	github.com/kvshare/kvshare/contract => ../contract
	github.com/kvshare/kvshare/rowbatch => ../rowbatch
	github.com/kvshare/kvshare/scheduler => ../scheduler
)
