module github.com/kvshare/kvshare/nodeclient

go 1.26.0

require (
	github.com/kvshare/kvshare/contract v0.3.0
	github.com/kvshare/kvshare/nodewire v0.3.0
	github.com/kvshare/kvshare/patience v0.3.0
	github.com/stretchr/testify v1.12.1
	golang.org/x/sys v0.48.0
)

require go.yaml.in/yaml/v3 v3.0.5 // indirect

replace (
	github.com/kvshare/kvshare/contract => ../contract
	github.com/kvshare/kvshare/nodewire => ../nodewire
	github.com/kvshare/kvshare/patience => ../patience
)
