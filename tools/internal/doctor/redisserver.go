package doctor

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/redis/rueidis"
)

// minRedisMajor and minRedisMinor are the oldest server the driver
// supports: 7.0.
const (
	minRedisMajor = 7
	minRedisMinor = 0
)

// checkVersion reads INFO server: redis_version must be 7.0 or later,
// redis_mode not sentinel (a sentinel stores nothing); for a file of one
// server a cluster node is a warning, for a cluster's file (cluster
// true) anything but a cluster node fails.
func checkVersion(ctx context.Context, c rueidis.Client, cluster bool, wait time.Duration) Finding {
	ctx, cancel := context.WithTimeout(ctx, wait)
	defer cancel()
	text, err := c.Do(ctx, c.B().Info().Section("server").Build()).ToString()
	if err != nil {
		if _, reply := rueidis.IsRedisErr(err); reply {
			return skip(CheckVersion, "INFO answered an error (renamed or disabled, or this user may not run it): %v; not checked: the driver needs Redis %d.%d or later", err, minRedisMajor, minRedisMinor)
		}
		return fail(CheckVersion, "INFO server: %v", err)
	}
	return judgeVersion(infoFields(text), cluster)
}

// judgeVersion judges INFO server's fields, of a cluster's node when
// cluster is true.
func judgeVersion(info map[string]string, cluster bool) Finding {
	version, mode := info["redis_version"], info["redis_mode"]
	major, minor, good := parseVersion(version)
	switch {
	case !good:
		return fail(CheckVersion, "INFO server gave no redis_version of the form X.Y.Z (got %q): is it a Redis server?", version)
	case major < minRedisMajor || major == minRedisMajor && minor < minRedisMinor:
		return fail(CheckVersion, "Redis %s: the driver needs %d.%d or later", version, minRedisMajor, minRedisMinor)
	case mode == "sentinel":
		return fail(CheckVersion, "Redis %s in sentinel mode: a sentinel stores nothing; give the address of the server it watches", version)
	case cluster && mode != "cluster":
		return fail(CheckVersion, "Redis %s in %s mode, not a cluster node: [redis] cluster = true wants the nodes of a Redis Cluster (for one server, set cluster = false and address)", version, modeText(mode))
	case !cluster && mode == "cluster":
		return warn(CheckVersion, "Redis %s in cluster mode, and the file names one server: the driver talks to this node alone and follows no MOVED redirection, so a key another node owns fails (Fault); set [redis] cluster = true, with the nodes as addresses", version)
	}
	if mode == "" {
		mode = "mode not given"
	}
	return ok(CheckVersion, "Redis %s (%s%s)", version, mode, osOf(info))
}

// modeText is a redis_mode as a sentence says it.
func modeText(mode string) string {
	if mode == "" {
		return "an unnamed"
	}
	return mode
}

func osOf(info map[string]string) string {
	if os := info["os"]; os != "" {
		return ", " + os
	}
	return ""
}

// parseVersion reads "X.Y.Z".
func parseVersion(v string) (major, minor int, good bool) {
	parts := strings.Split(v, ".")
	if len(parts) != 3 {
		return 0, 0, false
	}
	var err error
	if major, err = strconv.Atoi(parts[0]); err != nil {
		return 0, 0, false
	}
	if minor, err = strconv.Atoi(parts[1]); err != nil {
		return 0, 0, false
	}
	if _, err = strconv.Atoi(parts[2]); err != nil {
		return 0, 0, false
	}
	return major, minor, true
}

// infoFields reads INFO's "name:value" lines.
func infoFields(text string) map[string]string {
	fields := map[string]string{}
	for _, line := range strings.Split(text, "\n") {
		line = strings.TrimSpace(line)
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		if k, v, found := strings.Cut(line, ":"); found {
			fields[k] = v
		}
	}
	return fields
}

// configGet asks CONFIG GET for the parameters. reply is true when the
// server answered with an error reply (CONFIG renamed or disabled, or
// the user may not run it).
func configGet(ctx context.Context, c rueidis.Client, wait time.Duration, params ...string) (values map[string]string, reply bool, err error) {
	ctx, cancel := context.WithTimeout(ctx, wait)
	defer cancel()
	values, err = c.Do(ctx, c.B().ConfigGet().Parameter(params...).Build()).AsStrMap()
	if err != nil {
		_, reply = rueidis.IsRedisErr(err)
		return nil, reply, err
	}
	for _, p := range params {
		if _, found := values[p]; !found {
			return nil, false, fmt.Errorf("CONFIG GET %s: the answer holds no %s", strings.Join(params, " "), p)
		}
	}
	return values, false, nil
}

// configSkipped is the detail of a check CONFIG GET could not answer.
func configSkipped(params string, err error) string {
	return fmt.Sprintf("CONFIG GET %s answered an error (CONFIG renamed or disabled, or this user may not run it): %v; not checked", params, err)
}
