module github.com/kvshare/kvshare

go 1.26

require github.com/magefile/mage v1.17.2
