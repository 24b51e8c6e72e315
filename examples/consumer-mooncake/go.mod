module example.com/consumer-mooncake

go 1.26

require (
	github.com/kvshare/kvshare/binding v0.3.0
	github.com/kvshare/kvshare/contract v0.3.0
	github.com/kvshare/kvshare/hostmem v0.3.0
	github.com/kvshare/kvshare/lender v0.3.0
	github.com/kvshare/kvshare/mooncakedrv v0.3.0
	github.com/kvshare/kvshare/mooncakesdk v0.3.0
)
