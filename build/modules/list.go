package modules

// Third-party modules the table below allows.
const (
	purego    = "github.com/ebitengine/purego"
	toml      = "github.com/BurntSushi/toml"
	testify   = "github.com/stretchr/testify"
	nvml      = "github.com/NVIDIA/go-nvml"
	otelMeter = "go.opentelemetry.io/otel/metric"
	otelAttr  = "go.opentelemetry.io/otel/attribute"
	xxhash    = "github.com/cespare/xxhash" // otel/attribute's
	xsys      = "golang.org/x/sys"
	rueidis   = "github.com/redis/rueidis"
	zmq4      = "github.com/go-zeromq/zmq4"
	xsync     = "golang.org/x/sync" // zmq4's
	xtext     = "golang.org/x/text" // zmq4's
)

// Repo is kvshare's list: every module of the repository, the root
// first (Imports: what each module's packages import, directly or not,
// no more and no less; docs/modules.md shows it), and every outside
// consumer.
var Repo = List{Modules: []Module{
	{Dir: ".", Imports: []string{"*"}, Tags: "mage"}, // the build: mage, x/mod
	{Dir: "contract"},
	{Dir: "keys"},
	{Dir: "rowbatch", Imports: []string{"contract"}},
	{Dir: "scheduler"},
	{Dir: "hostmem", Imports: []string{"contract", xsys}},
	{Dir: "storeconfig", Imports: []string{"keys", toml}},
	{Dir: "loopback"},
	{Dir: "patience"},
	{Dir: "binding", Imports: []string{"contract", "keys", "rowbatch", "=storeconfig"}},
	{Dir: "lender", Imports: []string{"contract", "binding", "hostmem", "keys", "rowbatch", "=storeconfig", xsys}},
	{Dir: "drivekit", Imports: []string{"contract", "rowbatch", "scheduler"}},
	{Dir: "memdrv", Imports: []string{"contract", "rowbatch", "scheduler", "drivekit", "hostmem", xsys}},
	{Dir: "diskdrv", Imports: []string{"contract", "rowbatch", "scheduler", "drivekit", "storeconfig", "keys", toml, xsys}},
	{Dir: "nodewire", Imports: []string{"contract"}},
	{Dir: "node", Imports: []string{"contract", "binding", "keys", "rowbatch", "nodewire", "=storeconfig", xsys}},
	{Dir: "nodeclient", Imports: []string{"contract", "nodewire", xsys}},
	{Dir: "events", Imports: []string{"keys", zmq4, xsync, xtext, rueidis, xsys}}, // the only module with ZeroMQ; x/sys is rueidis's
	{Dir: "conformance", Imports: []string{"contract", "rowbatch", "patience"}},
	{Dir: "mooncakesdk", Imports: []string{"storeconfig", "keys", purego, toml}},
	{Dir: "mooncakedrv", Imports: []string{"contract", "rowbatch", "scheduler", "drivekit", "mooncakesdk", "storeconfig", "keys", "loopback", purego, toml}},
	{Dir: "redisdrv", Imports: []string{"contract", "drivekit", "rowbatch", "scheduler", "storeconfig", "keys", "loopback", rueidis, toml, xsys}},
	{Dir: "gpuroundtrip", Imports: []string{"contract", "keys", "rowbatch", "scheduler", "binding", "memdrv", "drivekit", "hostmem",
		"storeconfig", "mooncakesdk", "mooncakedrv", purego, toml, nvml, xsys}, Tags: "nvml"},
	{Dir: "telemetry", Imports: []string{"contract", "binding", "memdrv", "drivekit", "hostmem", "rowbatch", "scheduler", "node", "nodewire",
		"storeconfig", "keys", otelMeter, otelAttr, xxhash, xsys}},
	// the guide's code is tests; its program (roundtrip) and the README's (readme) lend over memdrv
	{Dir: "docs/engineguide", Imports: []string{"contract", "binding", "keys", "rowbatch", "=storeconfig", "hostmem", "lender",
		"memdrv", "drivekit", "scheduler", xsys}},
	{Dir: "docs/doccheck"}, // the documentation checked against the code (the scanners import only the standard library; the checks are tests)
	{Dir: "tools", Imports: []string{"*"}},
}, Consumers: []Consumer{
	{
		Dir: "examples/consumer-memdrv",
		Forbidden: []string{purego, toml, nvml, testify, "go.opentelemetry.io", "gonum.org",
			"github.com/prometheus", Prefix + "/mooncakesdk", Prefix + "/mooncakedrv", Prefix + "/gpuroundtrip",
			Prefix + "/telemetry", Prefix + "/conformance", Prefix + "/tools", Prefix + "/events", zmq4},
	},
	{
		Dir: "examples/consumer-mooncake",
		Forbidden: []string{nvml, testify, "go.opentelemetry.io", "gonum.org", "github.com/prometheus",
			Prefix + "/memdrv", Prefix + "/gpuroundtrip", Prefix + "/telemetry", Prefix + "/conformance", Prefix + "/tools", Prefix + "/events", zmq4},
	},
	{
		Dir:    "examples/consumer-redis",
		Server: ServerRedis,
		Forbidden: []string{purego, nvml, testify, "go.opentelemetry.io", "gonum.org", "github.com/prometheus",
			Prefix + "/mooncakesdk", Prefix + "/mooncakedrv", Prefix + "/memdrv", Prefix + "/gpuroundtrip",
			Prefix + "/telemetry", Prefix + "/conformance", Prefix + "/tools", Prefix + "/events", zmq4},
	},
}}
