module github.com/kvshare/kvshare/mooncakesdk

go 1.26

require (
	github.com/BurntSushi/toml v1.6.0
	github.com/ebitengine/purego v0.11.3
	github.com/stretchr/testify v1.12.1
)

require (
	github.com/kvshare/kvshare/keys v0.3.0 // indirect
	go.yaml.in/yaml/v3 v3.0.5 // indirect
)

require github.com/kvshare/kvshare/storeconfig v0.3.0

replace (
	github.com/kvshare/kvshare/keys => ../keys
	github.com/kvshare/kvshare/storeconfig => ../storeconfig
)
