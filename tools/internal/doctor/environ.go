package doctor

import (
	"github.com/kvshare/kvshare/mooncakesdk"
)

// envBindAddress is the variable that tells Mooncake's transfer engine
// which address its TCP transport listens on.
const envBindAddress = "MC_TCP_BIND_ADDRESS"

// checkEnvironment refuses what mooncakesdk.Open refuses
// (mooncakesdk.CheckEnvironment: each variable named, one line each),
// and says whether MC_TCP_BIND_ADDRESS is set.
func checkEnvironment(lookup func(string) (string, bool)) Finding {
	if err := mooncakesdk.CheckEnvironment(lookup); err != nil {
		return fail(CheckEnvironment, "%v", err)
	}
	bind := envBindAddress + " not set (the transfer engine chooses its own listening address)"
	if v, set := lookup(envBindAddress); set && v != "" {
		bind = envBindAddress + "=" + v
	}
	return ok(CheckEnvironment, "no variable the driver refuses is set (%s, %s, %s, %s); %s",
		mooncakesdk.EnvHotCacheSize, mooncakesdk.EnvTCPProto, mooncakesdk.EnvUseTENT, mooncakesdk.EnvUseTEv1, bind)
}
