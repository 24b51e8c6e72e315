package doctor

import (
	"github.com/kvshare/kvshare/mooncakesdk"
)

// EnvBindAddress is the variable that tells Mooncake's transfer engine
// which address its TCP transport listens on.
const EnvBindAddress = "MC_TCP_BIND_ADDRESS"

// checkEnvironment refuses what mooncakesdk.Open refuses
// (mooncakesdk.CheckEnvironment: each variable named, one line each),
// and says whether MC_TCP_BIND_ADDRESS is set.
func checkEnvironment(lookup func(string) (string, bool)) Finding {
	if err := mooncakesdk.CheckEnvironment(lookup); err != nil {
		return fail(CheckEnvironment, "%v", err)
	}
	bind := EnvBindAddress + " not set (the transfer engine chooses its own listening address)"
	if v, set := lookup(EnvBindAddress); set && v != "" {
		bind = EnvBindAddress + "=" + v
	}
	return ok(CheckEnvironment, "no variable the driver refuses is set (%s, %s, %s, %s); %s",
		mooncakesdk.EnvHotCacheSize, mooncakesdk.EnvTCPProto, mooncakesdk.EnvUseTENT, mooncakesdk.EnvUseTEv1, bind)
}
