module github.com/kvshare/kvshare/nodeclient

go 1.26.0

require (
	github.com/kvshare/kvshare/contract v0.3.0
	github.com/kvshare/kvshare/nodewire v0.3.0
)

replace (
	github.com/kvshare/kvshare/contract => ../contract
	github.com/kvshare/kvshare/nodewire => ../nodewire
)
