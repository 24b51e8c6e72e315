module github.com/kvshare/kvshare/keys

go 1.26
