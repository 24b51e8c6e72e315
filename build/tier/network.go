package tier

import (
	"fmt"
	"os"
	"os/exec"
	"strings"
)

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
	script := "'" + ip + `' link set lo up && exec "$@"`
	if out, err := exec.Command(unshare, "--net", "sh", "-c", script, "sh", "true").CombinedOutput(); err != nil {
		return nil, fmt.Sprintf("on loopback (unshare --net failed: %v: %s)", err, strings.TrimSpace(string(out)))
	}
	return []string{unshare, "--net", "sh", "-c", script, "sh"}, "in a private network namespace (unshare --net, only lo, up)"
}
