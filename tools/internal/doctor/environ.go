package doctor

import (
	"github.com/kvshare/kvshare/mooncakesdk"
)

// envBindAddress is the variable that tells Mooncake's transfer engine
// the address to give its peers for reaching it.
const envBindAddress = "MC_TCP_BIND_ADDRESS"

// checkEnvironment refuses what mooncakesdk.Open refuses
// (mooncakesdk.CheckEnvironment: each variable named, one line each),
// and warns when MC_TCP_BIND_ADDRESS is unset or empty.
func checkEnvironment(lookup func(string) (string, bool)) Finding {
	if err := mooncakesdk.CheckEnvironment(lookup); err != nil {
		return fail(CheckEnvironment, "%v", err)
	}
	refused := "no variable the driver refuses is set (" + mooncakesdk.EnvHotCacheSize + ", " + mooncakesdk.EnvTCPProto + ", " +
		mooncakesdk.EnvUseTENT + ", " + mooncakesdk.EnvUseTEv1 + ")"
	v, set := lookup(envBindAddress)
	switch {
	case set && v != "":
		return ok(CheckEnvironment, "%s; %s=%s", refused, envBindAddress, v)
	case set:
		return warn(CheckEnvironment, "%s; but %s is empty: the transfer engine then gives its peers an empty address; %s", refused, envBindAddress, bindAdvice)
	}
	return warn(CheckEnvironment, "%s; but %s is not set: the transfer engine then gives its peers the first address it finds on this host's interfaces; %s",
		refused, envBindAddress, bindAdvice)
}

const bindAdvice = "set it, for every client and segment provider, to the address the transfer engine should be reached at (127.0.0.1 for a pool on one machine)"
