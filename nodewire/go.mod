module github.com/kvshare/kvshare/nodewire

go 1.26.0

require github.com/kvshare/kvshare/contract v0.3.0

replace github.com/kvshare/kvshare/contract => ../contract
