package doctor

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/redis/rueidis"

	"github.com/kvshare/kvshare/redisdrv"
)

// checkMemory reads CONFIG GET maxmemory and maxmemory-policy and judges
// each against the file's expectations: CheckMaxMemory, then
// CheckEviction.
func checkMemory(ctx context.Context, c rueidis.Client, sc redisdrv.StoreConfig, wait time.Duration) []Finding {
	values, reply, err := configGet(ctx, c, wait, "maxmemory", "maxmemory-policy")
	switch {
	case reply:
		detail := configSkipped("maxmemory maxmemory-policy", err)
		return []Finding{skip(CheckMaxMemory, "%s%s", detail, unverified(sc.Redis.MaxMemory > 0, "maxmemory")),
			skip(CheckEviction, "%s%s", detail, unverified(sc.Redis.MaxMemoryPolicy != "", "maxmemory_policy"))}
	case err != nil:
		return []Finding{fail(CheckMaxMemory, "%v", err), fail(CheckEviction, "%v", err)}
	}
	limit, err := strconv.ParseInt(values["maxmemory"], 10, 64)
	if err != nil || limit < 0 {
		return []Finding{fail(CheckMaxMemory, "CONFIG GET maxmemory answered %q, not a number of bytes", values["maxmemory"]),
			judgePolicy(sc, values["maxmemory-policy"], -1)}
	}
	return []Finding{judgeMaxMemory(sc, limit), judgePolicy(sc, values["maxmemory-policy"], limit)}
}

// unverified notes an expectation of the file that stays unverified.
func unverified(set bool, key string) string {
	if !set {
		return ""
	}
	return "; [redis] " + key + " stays unverified"
}

// noLimit says what maxmemory 0 means for kvshare.
const noLimit = "no limit: Redis grows until the kernel's out-of-memory killer ends it, and every stored row goes with it"

// judgeMaxMemory judges the server's maxmemory against [redis]
// maxmemory (the least the file expects; 0 checks nothing).
func judgeMaxMemory(sc redisdrv.StoreConfig, limit int64) Finding {
	want := sc.Redis.MaxMemory
	switch {
	case want > 0 && limit == 0:
		return fail(CheckMaxMemory, "the server has maxmemory 0 (%s); %s: [redis] maxmemory expects at least %s: set maxmemory on the server (redis.conf, or CONFIG SET maxmemory)",
			noLimit, sc.File, bytesText(want))
	case want > 0 && limit < want:
		return fail(CheckMaxMemory, "the server has maxmemory %s; %s: [redis] maxmemory expects at least %s", bytesText(limit), sc.File, bytesText(want))
	case want > 0:
		return ok(CheckMaxMemory, "%s, at least the %s [redis] maxmemory expects", bytesText(limit), size(want))
	case limit == 0:
		return warn(CheckMaxMemory, "0 (%s); set maxmemory on the server, and [redis] maxmemory to have it checked here", noLimit)
	}
	return ok(CheckMaxMemory, "%s ([redis] maxmemory not set: not checked)", bytesText(limit))
}

// judgePolicy judges the server's maxmemory-policy against [redis]
// maxmemory_policy ("" checks nothing) and says what it means for a row
// kvshare stored. limit is the server's maxmemory (0: no limit, so no
// policy ever acts; -1: unknown).
func judgePolicy(sc redisdrv.StoreConfig, policy string, limit int64) Finding {
	want := sc.Redis.MaxMemoryPolicy
	if want != "" && policy != want {
		return fail(CheckEviction, "the server's maxmemory-policy is %s; %s: [redis] maxmemory_policy expects %s", policy, sc.File, want)
	}
	meaning := policyMeaning(policy)
	if limit == 0 {
		meaning += " (with maxmemory 0 it never acts)"
	}
	checked := " ([redis] maxmemory_policy not set: not checked)"
	if want != "" {
		checked = ", as [redis] maxmemory_policy expects"
	}
	if want == "" && evicts(policy) && limit != 0 {
		return warn(CheckEviction, "%s%s: %s", policy, checked, meaning)
	}
	return ok(CheckEviction, "%s%s: %s", policy, checked, meaning)
}

// evicts reports whether a policy may evict a key kvshare stored: the
// allkeys policies. The volatile ones evict only keys with a time to
// live, and kvshare sets none.
func evicts(policy string) bool { return strings.HasPrefix(policy, "allkeys-") }

// policyMeaning says what a full server does to kvshare's rows.
func policyMeaning(policy string) string {
	switch {
	case policy == "noeviction":
		return "a full server refuses puts (OOM: the rows end Declined) and keeps every stored row until it is removed"
	case evicts(policy):
		return "a full server evicts keys, kvshare's among them: a row whose put was Ready may later read Miss (looked up Absent), and the engine recomputes it"
	case strings.HasPrefix(policy, "volatile-"):
		return "it evicts only keys with a time to live, and kvshare sets none: its rows are never evicted, and a full server refuses their puts (Declined) once no such key is left"
	}
	return fmt.Sprintf("a policy this doctor does not know (%q)", policy)
}

// bytesText prints a byte count with its binary size.
func bytesText(n int64) string {
	if s := size(n); s != fmt.Sprintf("%d B", n) {
		return fmt.Sprintf("%s (%d bytes)", s, n)
	}
	return fmt.Sprintf("%d bytes", n)
}

// checkPersistence reads CONFIG GET save and appendonly and says what
// the server writes to disk; it never fails.
func checkPersistence(ctx context.Context, c rueidis.Client, wait time.Duration) Finding {
	values, reply, err := configGet(ctx, c, wait, "save", "appendonly")
	switch {
	case reply:
		return skip(CheckPersistence, "%s", configSkipped("save appendonly", err))
	case err != nil:
		return skip(CheckPersistence, "%v; not checked", err)
	}
	return persistence(values["save"], values["appendonly"])
}

// persistence says what save and appendonly mean for kvshare's rows.
func persistence(save, appendonly string) Finding {
	var what []string
	if save == "" {
		what = append(what, `save "" (no RDB snapshots)`)
	} else {
		what = append(what, fmt.Sprintf("save %q: each RDB snapshot forks the server and writes every stored row to disk (copy-on-write can take as much memory again while it runs)", save))
	}
	if appendonly == "yes" {
		what = append(what, "appendonly yes: the AOF writes every row's bytes to disk again")
	} else {
		what = append(what, "appendonly "+appendonly)
	}
	if save == "" && appendonly != "yes" {
		what = append(what, "nothing reaches the disk: a restart empties the server, and every row then reads Miss")
	}
	return ok(CheckPersistence, "%s", strings.Join(what, "; "))
}
