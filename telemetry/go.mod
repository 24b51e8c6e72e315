module github.com/kvshare/kvshare/telemetry

go 1.26.0

require (
	github.com/kvshare/kvshare/contract v0.3.0
	github.com/kvshare/kvshare/patience v0.3.0
	github.com/stretchr/testify v1.12.1
	go.opentelemetry.io/otel v1.47.0
	go.opentelemetry.io/otel/metric v1.47.0
	go.opentelemetry.io/otel/sdk/metric v1.47.0
)

require (
	github.com/go-logr/logr v1.4.4 // indirect
	github.com/go-logr/stdr v1.2.2 // indirect
	github.com/google/uuid v1.6.0 // indirect
	github.com/kvshare/kvshare/hostmem v0.3.0 // indirect
	github.com/kvshare/kvshare/storeconfig v0.3.0 // indirect
	go.opentelemetry.io/auto/sdk v1.2.1 // indirect
	go.opentelemetry.io/otel/log v1.47.0 // indirect
	go.opentelemetry.io/otel/sdk v1.47.0 // indirect
	go.opentelemetry.io/otel/trace v1.47.0 // indirect
	go.yaml.in/yaml/v3 v3.0.5 // indirect
	golang.org/x/sys v0.48.0 // indirect
)

require (
	github.com/cespare/xxhash/v2 v2.3.0 // indirect
	github.com/kvshare/kvshare/binding v0.3.0
	github.com/kvshare/kvshare/drivekit v0.3.0
	github.com/kvshare/kvshare/keys v0.3.0
	github.com/kvshare/kvshare/memdrv v0.3.0
	github.com/kvshare/kvshare/node v0.3.0
	github.com/kvshare/kvshare/nodeclient v0.3.0
	github.com/kvshare/kvshare/nodewire v0.3.0
	github.com/kvshare/kvshare/rowbatch v0.3.0 // indirect
	github.com/kvshare/kvshare/scheduler v0.3.0 // indirect
)

replace github.com/kvshare/kvshare/contract => ../contract

replace github.com/kvshare/kvshare/mooncakedrv => ../mooncakedrv

replace github.com/kvshare/kvshare/mooncakesdk => ../mooncakesdk

replace github.com/kvshare/kvshare/rowbatch => ../rowbatch

replace github.com/kvshare/kvshare/scheduler => ../scheduler

replace github.com/kvshare/kvshare/keys => ../keys

replace github.com/kvshare/kvshare/binding => ../binding

replace github.com/kvshare/kvshare/memdrv => ../memdrv

replace github.com/kvshare/kvshare/conformance => ../conformance

replace github.com/kvshare/kvshare/storeconfig => ../storeconfig

replace github.com/kvshare/kvshare/hostmem => ../hostmem

replace github.com/kvshare/kvshare/loopback => ../loopback

replace github.com/kvshare/kvshare/patience => ../patience

replace github.com/kvshare/kvshare/node => ../node

replace github.com/kvshare/kvshare/nodewire => ../nodewire

replace github.com/kvshare/kvshare/nodeclient => ../nodeclient

replace github.com/kvshare/kvshare/redisdrv => ../redisdrv

replace github.com/kvshare/kvshare/drivekit => ../drivekit
