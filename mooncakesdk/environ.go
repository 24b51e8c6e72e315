package mooncakesdk

import (
	"errors"
	"fmt"
)

// The environment variables the library reads that [Open] refuses.
const (
	// EnvHotCacheSize, when more than 0, turns on a per-client read cache
	// that checks a hit by key and size only: a torn or stale object can
	// be served as whole.
	EnvHotCacheSize = "MC_STORE_LOCAL_HOT_CACHE_SIZE"
	// EnvTCPProto=1 selects the legacy TCP framing, which reports a write
	// as done once it entered the local socket, before it landed.
	EnvTCPProto = "MC_TCP_PROTO"
	// EnvUseTENT and EnvUseTEv1, set to anything, switch to another
	// transfer engine whose behaviour the driver was not written against.
	EnvUseTENT = "MC_USE_TENT"
	EnvUseTEv1 = "MC_USE_TEV1"
)

// EnvLibrary names the library's path when the config does not.
const EnvLibrary = "KVSHARE_MOONCAKE_LIB"

// CheckEnvironment refuses an environment that asks the library for a
// mode that breaks the driver's proofs: [EnvHotCacheSize] other than
// empty or "0", [EnvTCPProto] equal to "1" (the only value the library
// honours), [EnvUseTENT] or [EnvUseTEv1] set at all (even empty). lookup
// is [os.LookupEnv] or a stand-in. Every refusal names its variable and
// wraps [ErrEnvironment]; all of them are joined.
func CheckEnvironment(lookup func(string) (string, bool)) error {
	var errs []error
	if v, ok := lookup(EnvHotCacheSize); ok && v != "" && v != "0" {
		errs = append(errs, fmt.Errorf("%w: %s=%q turns on the local hot cache, which can serve a torn or stale object as whole; unset it or set it to 0",
			ErrEnvironment, EnvHotCacheSize, v))
	}
	if v, ok := lookup(EnvTCPProto); ok && v == "1" {
		errs = append(errs, fmt.Errorf("%w: %s=1 selects legacy TCP framing, which reports a write before it lands; unset it",
			ErrEnvironment, EnvTCPProto))
	}
	for _, name := range []string{EnvUseTENT, EnvUseTEv1} {
		if v, ok := lookup(name); ok {
			errs = append(errs, fmt.Errorf("%w: %s=%q switches to another transfer engine; unset it",
				ErrEnvironment, name, v))
		}
	}
	return errors.Join(errs...)
}
