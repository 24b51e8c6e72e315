package doctor

import (
	"fmt"
	"strings"

	"github.com/kvshare/kvshare/mooncakesdk"
	"github.com/kvshare/kvshare/storeconfig"
	"github.com/kvshare/kvshare/tools/internal/runprefix"
)

// checkConfig reads the store config as the driver will
// (mooncakesdk.LoadStoreConfig): a refusal names the file, the section
// and the key, one line per finding.
func checkConfig(path string) (mooncakesdk.StoreConfig, Finding) {
	cfg, err := mooncakesdk.LoadStoreConfig(path)
	if err != nil {
		return cfg, fail(CheckConfig, "%s", configLines(err))
	}
	m := cfg.Mooncake
	return cfg, ok(CheckConfig, "%s: master %s, metadata %s, protocol %s%s, local hostname %s, global segment %s, local buffer %s, %d workers, %s, %s",
		path, m.Master, m.MetadataServer, m.Protocol, devices(m.Devices), m.LocalHostname,
		size(int64(m.GlobalSegmentSize)), size(int64(m.LocalBufferSize)), m.Workers, inFlight(m.CallsInFlight), replicas(m))
}

// replicas names what every put asks the master for: the copies, the
// soft pin, the preferred segments.
func replicas(m mooncakesdk.MooncakeConfig) string {
	out := fmt.Sprintf("replicas %d", m.Replicas)
	if m.SoftPin {
		out += ", soft pin"
	}
	if len(m.PreferredSegments) > 0 {
		out += ", preferred segments " + strings.Join(m.PreferredSegments, " ")
	}
	return out
}

// inFlight names the calls_in_flight setting.
func inFlight(n int) string {
	if n == 0 {
		return "calls_in_flight 0 (no bound)"
	}
	return fmt.Sprintf("calls_in_flight %d", n)
}

// configLines is one line per refusal of a config error (several are
// joined by LoadStoreConfig).
func configLines(err error) string {
	if _, one := err.(*mooncakesdk.ConfigError); one {
		return err.Error()
	}
	joined, ok := err.(interface{ Unwrap() []error })
	if !ok {
		return err.Error()
	}
	var lines []string
	for _, e := range joined.Unwrap() {
		lines = append(lines, e.Error())
	}
	return strings.Join(lines, "\n")
}

func devices(names []string) string {
	if len(names) == 0 {
		return ""
	}
	return " (devices " + strings.Join(names, ",") + ")"
}

// checkKeyPrefix builds this run's probe prefix under [blob] key_prefix
// (runprefix: base/doctor/run) and checks it against the key rules, so a
// prefix the backend would refuse is named here with its file, section
// and key.
func checkKeyPrefix(file string, blob storeconfig.Blob) (string, Finding) {
	prefix, err := runprefix.New(blob.KeyPrefix, "doctor")
	if err != nil {
		return "", fail(CheckKeyPrefix, "%s: [blob] key_prefix: %v", file, err)
	}
	if blob.KeyPrefix == "" {
		return prefix, ok(CheckKeyPrefix, "[blob] key_prefix not set: keys start with %q; this run's probe is under %s/", runprefix.DefaultBase, prefix)
	}
	return prefix, ok(CheckKeyPrefix, "%q; this run's probe is under %s/", blob.KeyPrefix, prefix)
}

// size prints bytes in binary units.
func size(n int64) string {
	switch {
	case n >= 1<<30 && n%(1<<30) == 0:
		return fmt.Sprintf("%d GiB", n>>30)
	case n >= 1<<20 && n%(1<<20) == 0:
		return fmt.Sprintf("%d MiB", n>>20)
	case n >= 1<<10 && n%(1<<10) == 0:
		return fmt.Sprintf("%d KiB", n>>10)
	}
	return fmt.Sprintf("%d B", n)
}
