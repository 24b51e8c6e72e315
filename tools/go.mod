module github.com/kvshare/kvshare/tools

go 1.26.0

require (
	github.com/go-zeromq/zmq4 v0.17.0
	github.com/kvshare/kvshare/binding v0.3.0
	github.com/kvshare/kvshare/contract v0.3.0
	github.com/kvshare/kvshare/diskdrv v0.3.0
	github.com/kvshare/kvshare/hostmem v0.3.0
	github.com/kvshare/kvshare/keys v0.3.0
	github.com/kvshare/kvshare/memdrv v0.3.0
	github.com/kvshare/kvshare/mooncakedrv v0.3.0
	github.com/kvshare/kvshare/mooncakesdk v0.3.0
	github.com/kvshare/kvshare/patience v0.3.0
	github.com/kvshare/kvshare/redisdrv v0.3.0
	github.com/kvshare/kvshare/storeconfig v0.3.0
	github.com/kvshare/kvshare/telemetry v0.3.0
	github.com/prometheus/client_golang v1.25.0
	github.com/prometheus/client_model v0.6.3
	github.com/prometheus/common v0.72.0
	github.com/redis/rueidis v1.0.79
	github.com/schollz/progressbar/v3 v3.19.1
	github.com/stretchr/testify v1.12.1
	go.opentelemetry.io/otel v1.47.0
	go.opentelemetry.io/otel/exporters/prometheus v0.69.0
	go.opentelemetry.io/otel/metric v1.47.0
	go.opentelemetry.io/otel/sdk/metric v1.47.0
	gonum.org/v1/plot v0.17.0
)

require (
	github.com/NVIDIA/go-nvml v0.13.4-1 // indirect
	github.com/beorn7/perks v1.0.1 // indirect
	github.com/cespare/xxhash/v2 v2.3.0 // indirect
	github.com/go-logr/logr v1.4.4 // indirect
	github.com/go-logr/stdr v1.2.2 // indirect
	github.com/go-zeromq/goczmq/v4 v4.2.2 // indirect
	github.com/google/uuid v1.6.0 // indirect
	github.com/kvshare/kvshare/loopback v0.3.0 // indirect
	github.com/munnerz/goautoneg v0.0.0-20191010083416-a7dc8b61c822 // indirect
	github.com/prometheus/otlptranslator v1.0.0 // indirect
	github.com/prometheus/procfs v0.22.0 // indirect
	go.opentelemetry.io/auto/sdk v1.2.1 // indirect
	go.opentelemetry.io/otel/log v1.47.0 // indirect
	go.opentelemetry.io/otel/sdk v1.47.0 // indirect
	go.opentelemetry.io/otel/trace v1.47.0 // indirect
	golang.org/x/sync v0.23.0 // indirect
	google.golang.org/protobuf v1.36.12 // indirect
)

require (
	codeberg.org/go-fonts/liberation v0.5.0 // indirect
	codeberg.org/go-latex/latex v0.2.0 // indirect
	codeberg.org/go-pdf/fpdf v0.11.1 // indirect
	git.sr.ht/~sbinet/gg v0.7.0 // indirect
	github.com/BurntSushi/toml v1.6.0 // indirect
	github.com/ajstarks/svgo v0.0.0-20211024235047-1546f124cd8b // indirect
	github.com/ebitengine/purego v0.11.3 // indirect
	github.com/golang/freetype v0.0.0-20170609003504-e2365dfdc4a0 // indirect
	github.com/kvshare/kvshare/drivekit v0.3.0
	github.com/kvshare/kvshare/events v0.3.0
	github.com/kvshare/kvshare/gpuroundtrip v0.3.0
	github.com/kvshare/kvshare/node v0.3.0
	github.com/kvshare/kvshare/nodeclient v0.3.0
	github.com/kvshare/kvshare/nodewire v0.3.0
	github.com/kvshare/kvshare/rowbatch v0.3.0 // indirect
	github.com/kvshare/kvshare/scheduler v0.3.0
	github.com/mitchellh/colorstring v0.0.0-20190213212951-d06e56a500db // indirect
	github.com/rivo/uniseg v0.4.7 // indirect
	go.yaml.in/yaml/v3 v3.0.5 // indirect
	golang.org/x/image v0.30.0 // indirect
	golang.org/x/sys v0.48.0
	golang.org/x/term v0.44.0 // indirect
	golang.org/x/text v0.42.0 // indirect
)

replace (
	github.com/kvshare/kvshare/binding => ../binding
	github.com/kvshare/kvshare/conformance => ../conformance
	github.com/kvshare/kvshare/contract => ../contract
	github.com/kvshare/kvshare/diskdrv => ../diskdrv
	github.com/kvshare/kvshare/keys => ../keys
	github.com/kvshare/kvshare/memdrv => ../memdrv
	github.com/kvshare/kvshare/mooncakedrv => ../mooncakedrv
	github.com/kvshare/kvshare/mooncakesdk => ../mooncakesdk
	github.com/kvshare/kvshare/redisdrv => ../redisdrv
	github.com/kvshare/kvshare/rowbatch => ../rowbatch
	github.com/kvshare/kvshare/scheduler => ../scheduler
	github.com/kvshare/kvshare/telemetry => ../telemetry
)

replace github.com/kvshare/kvshare/gpuroundtrip => ../gpuroundtrip

replace github.com/kvshare/kvshare/storeconfig => ../storeconfig

replace github.com/kvshare/kvshare/hostmem => ../hostmem

replace github.com/kvshare/kvshare/loopback => ../loopback

replace github.com/kvshare/kvshare/patience => ../patience

replace github.com/kvshare/kvshare/node => ../node

replace github.com/kvshare/kvshare/nodewire => ../nodewire

replace github.com/kvshare/kvshare/nodeclient => ../nodeclient

replace github.com/kvshare/kvshare/drivekit => ../drivekit

replace github.com/kvshare/kvshare/events => ../events
