package tier

import (
	"fmt"
	"os"
	"os/exec"
	"strings"
)

// envIsolate is mooncakedrv/pool's EnvIsolate: the tier sets it inside
// its own network namespace, where a pool may isolate its providers.
const envIsolate = "KVSHARE_POOL_ISOLATE"

// PrivateNetwork returns the command prefix that runs a command in a
// network namespace of its own with only lo, up, and says where tests
// run; an empty prefix (loopback) when not root, or when unshare or ip
// is missing or refused.
func PrivateNetwork() ([]string, string) {
	if os.Geteuid() != 0 {
		return nil, "on loopback (not root, so no private network namespace)"
	}
	unshare, err := exec.LookPath("unshare")
	if err != nil {
		return nil, "on loopback (no unshare, so no private network namespace)"
	}
	ip, err := exec.LookPath("ip")
	if err != nil {
		return nil, "on loopback (no ip command to bring lo up in a private network namespace)"
	}
	// Inside the tier's own namespace: a connect to a node cut off gives up
	// after one SYN retry (about 3 s, not the kernel's 2 min), and pools
	// may isolate their providers (a bridge here harms nothing outside).
	script := "'" + ip + `' link set lo up && echo 1 > /proc/sys/net/ipv4/tcp_syn_retries && ` + envIsolate + `=1 exec "$@"`
	if out, err := exec.Command(unshare, "--net", "sh", "-c", script, "sh", "true").CombinedOutput(); err != nil {
		return nil, fmt.Sprintf("on loopback (unshare --net failed: %v: %s)", err, strings.TrimSpace(string(out)))
	}
	return []string{unshare, "--net", "sh", "-c", script, "sh"}, "in a private network namespace (unshare --net, only lo, up; tcp_syn_retries 1; providers may be isolated)"
}
