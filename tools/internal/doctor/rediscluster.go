package doctor

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/redis/rueidis"

	"github.com/kvshare/kvshare/redisdrv"
	"github.com/kvshare/kvshare/redisdrv/slotmap"
)

// The checks of a Redis Cluster's store file ([redis] cluster = true)
// of its own, by the name each prints, after CheckPassword; the others
// print as one server's, each judged on every node.
const (
	CheckSlotMap      = "slot map"
	CheckNodes        = "nodes"
	CheckClusterState = "cluster state"
)

// redisClusterChecks lists every check of a cluster's store file in
// order.
var redisClusterChecks = [...]string{CheckConfig, CheckKeyPrefix, CheckPassword, CheckSlotMap, CheckNodes, CheckClusterState,
	CheckVersion, CheckMaxMemory, CheckEviction, CheckPersistence, CheckPut, CheckLookup, CheckGet, CheckRemove, CheckClose}

// runRedisCluster goes on from runRedis for a cluster's store file once
// the config, the key prefix and the password variable were checked:
// the slot map read from the first seed that answers (every slot
// served), every node of it asked PING, then each node's cluster state,
// version, memory limit, eviction policy and persistence, each check one
// line naming the node whenever the nodes differ, and the probe through
// a backend over the driver when no check failed.
func runRedisCluster(ctx context.Context, opts Options, r *run, sc redisdrv.StoreConfig, prefix string) Report {
	opt, err := sc.ClientOption()
	if err != nil { // checkPassword passed, so this cannot happen
		r.add(fail(CheckSlotMap, "%v", err))
		r.skipRest("no client option")
		return r.Report
	}
	m, f := readSlotMap(ctx, sc, opt, opts.Wait)
	if !r.add(f) && m == nil {
		r.skipRest("no seed answered")
		return r.Report
	}
	if len(m.Addrs) == 0 {
		r.skipRest("the slot map names no node")
		return r.Report
	}
	nodes, f := pingNodes(ctx, sc, opt, *m, opts.Wait)
	r.add(f)
	defer func() {
		for _, n := range nodes {
			if n.client != nil {
				n.client.Close()
			}
		}
	}()
	var live []clusterNode
	var silent []string
	for _, n := range nodes {
		if n.client != nil {
			live = append(live, n)
		} else {
			silent = append(silent, n.addr)
		}
	}
	if len(live) == 0 {
		r.skipRest("no node answered")
		return r.Report
	}
	// Each check is judged on the nodes that answered; those that did
	// not are named on every line.
	add := func(check string, per []nodeAnswer[Finding]) {
		f := merged(check, per)
		if len(silent) > 0 {
			f.Detail += "\n" + strings.Join(silent, ", ") + ": not asked: it did not answer PING"
		}
		r.add(f)
	}
	add(CheckClusterState, each(live, func(c rueidis.Client) Finding { return checkClusterState(ctx, c, opts.Wait) }))
	add(CheckVersion, each(live, func(c rueidis.Client) Finding { return checkVersion(ctx, c, true, opts.Wait) }))
	mem := each(live, func(c rueidis.Client) []Finding { return checkMemory(ctx, c, sc, opts.Wait) })
	for i, check := range []string{CheckMaxMemory, CheckEviction} {
		per := make([]nodeAnswer[Finding], len(mem))
		for k, a := range mem {
			per[k] = nodeAnswer[Finding]{addr: a.addr, v: a.v[i]}
		}
		add(check, per)
	}
	add(CheckPersistence, each(live, func(c rueidis.Client) Finding { return checkPersistence(ctx, c, opts.Wait) }))
	if r.failed() {
		r.skipRest("a check above failed")
		return r.Report
	}
	key, err := probeKey(prefix)
	if err != nil { // checkKeyPrefix passed, so this cannot happen
		r.add(fail(CheckPut, "%v", err))
		r.skipRest("no probe key")
		return r.Report
	}
	owner := nodes[m.Node(key)] // every slot is served and every node answered: no check failed
	for _, f := range redisProbe(ctx, sc, owner.client, prefix, opts) {
		r.add(f)
	}
	return r.Report
}

// readSlotMap asks each seed address in turn, each through a client of its own,
// for the slot map (CLUSTER SLOTS) and judges the first answer: every
// slot must be served, or the first range none serves is named. The map
// is nil when no seed answered.
func readSlotMap(ctx context.Context, sc redisdrv.StoreConfig, opt rueidis.ClientOption, wait time.Duration) (*slotmap.Map, Finding) {
	var missed []string
	for _, seed := range sc.Redis.Seeds() {
		c, _, why := ping(ctx, sc, nodeOption(opt, seed, wait), seed, wait)
		if why != "" {
			missed = append(missed, why)
			continue
		}
		sctx, cancel := context.WithTimeout(ctx, wait)
		m, err := slotmap.Read(sctx, c, seed)
		cancel()
		c.Close()
		if err != nil {
			missed = append(missed, fmt.Sprintf("%s: CLUSTER SLOTS: %v%s", seed, err, slotsHint(err)))
			continue
		}
		return &m, judgeSlotMap(m, seed, missed)
	}
	return nil, fail(CheckSlotMap, "no seed answered CLUSTER SLOTS (%s: [redis] addresses):\n%s", sc.File, strings.Join(missed, "\n"))
}

// slotsHint says what to look at when a seed answered CLUSTER SLOTS
// with an error.
func slotsHint(err error) string {
	if strings.Contains(err.Error(), "cluster support disabled") {
		return " (a server that is not a cluster node: for one server set [redis] cluster = false and address)"
	}
	return ""
}

// judgeSlotMap judges the slot map seed answered: every slot must be
// served. Seeds that did not answer before it (missed, each naming its
// address) are a warning.
func judgeSlotMap(m slotmap.Map, seed string, missed []string) Finding {
	if gaps := m.Gaps(); len(gaps) > 0 {
		more := ""
		if len(gaps) > 1 {
			more = fmt.Sprintf(", the first of %d ranges", len(gaps))
		}
		return fail(CheckSlotMap, "CLUSTER SLOTS from %s: %d of %d slots served, by %d nodes; no node serves slots %s%s: a row whose key hashes there ends Fault (assign them, for example with redis-cli --cluster fix)",
			seed, m.Covered(), slotmap.Slots, len(m.Addrs), gaps[0], more)
	}
	f := ok(CheckSlotMap, "CLUSTER SLOTS from %s: all %d slots served, by %d nodes", seed, slotmap.Slots, len(m.Addrs))
	if len(missed) > 0 {
		f = warn(CheckSlotMap, "%s; the seed addresses asked before it did not answer:\n%s", f.Detail, strings.Join(missed, "\n"))
	}
	return f
}

// clusterNode is one node of the slot map: its address and the doctor's
// client of it, nil when it did not answer PING.
type clusterNode struct {
	addr   string
	client rueidis.Client
}

// pingNodes opens a client of every node of the slot map, as the driver
// opens one (nodeOption), and asks it PING: one line a node, with the
// slots it serves, failing when any did not answer.
func pingNodes(ctx context.Context, sc redisdrv.StoreConfig, opt rueidis.ClientOption, m slotmap.Map, wait time.Duration) ([]clusterNode, Finding) {
	nodes := make([]clusterNode, len(m.Addrs))
	lines := make([]string, len(m.Addrs))
	silent := 0
	for i, addr := range m.Addrs {
		nodes[i].addr = addr
		var took time.Duration
		var why string
		nodes[i].client, took, why = ping(ctx, sc, nodeOption(opt, addr, wait), addr, wait)
		served := addr + " (slots " + m.SlotsText(addr) + ")"
		if why != "" {
			silent++
			lines[i] = served + strings.TrimPrefix(why, addr)
			continue
		}
		lines[i] = fmt.Sprintf("%s answered PING with PONG in %v", served, took)
	}
	if silent > 0 {
		return nodes, fail(CheckNodes, "%d of %d nodes did not answer:\n%s", silent, len(nodes), strings.Join(lines, "\n"))
	}
	return nodes, ok(CheckNodes, "all %d nodes answered (connected and handshaken as the driver's clients are):\n%s", len(nodes), strings.Join(lines, "\n"))
}

// checkClusterState reads CLUSTER INFO (a RESP3 verbatim string: its
// "txt:" cut) and judges it.
func checkClusterState(ctx context.Context, c rueidis.Client, wait time.Duration) Finding {
	ctx, cancel := context.WithTimeout(ctx, wait)
	defer cancel()
	text, err := c.Do(ctx, c.B().ClusterInfo().Build()).ToString()
	if err != nil {
		return fail(CheckClusterState, "CLUSTER INFO: %v", err)
	}
	return judgeClusterInfo(infoFields(strings.TrimPrefix(text, "txt:")))
}

// judgeClusterInfo judges CLUSTER INFO's fields: cluster_state must be
// ok; slots the node flags failing are a warning.
func judgeClusterInfo(info map[string]string) Finding {
	state := info["cluster_state"]
	seen := fmt.Sprintf("%s slots assigned, %s known nodes", orUnknown(info["cluster_slots_assigned"]), orUnknown(info["cluster_known_nodes"]))
	if state != "ok" {
		return fail(CheckClusterState, "cluster_state:%s, not ok (%s): the node refuses commands (CLUSTERDOWN) until the cluster is whole again", orUnknown(state), seen)
	}
	pfail, _ := strconv.Atoi(info["cluster_slots_pfail"])
	failed, _ := strconv.Atoi(info["cluster_slots_fail"])
	if pfail > 0 || failed > 0 {
		return warn(CheckClusterState, "cluster_state:ok (%s), but %d slots flagged failing (fail?) and %d failed: a node does not answer the others", seen, pfail, failed)
	}
	return ok(CheckClusterState, "cluster_state:ok (%s)", seen)
}

// orUnknown is s, or "?" when empty.
func orUnknown(s string) string {
	if s == "" {
		return "?"
	}
	return s
}
