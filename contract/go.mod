module github.com/kvshare/kvshare/contract

go 1.26
