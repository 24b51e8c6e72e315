package storeconfig

import (
	"os"
	"path/filepath"
	"time"
)

// Node is the [node] section: how `kvshare node` serves the store the
// file names to engines in other processes (module node's Config). A
// key left out is 0 (or empty), which stands for the node's default;
// every store-file reader knows the section and checks it, whether or
// not it runs a node.
type Node struct {
	// Socket (socket) is the absolute path of the node's Unix socket.
	Socket string
	// Mode (mode) is the socket file's permission bits, written in
	// octal as a string ("0660"); 0 means 0600.
	Mode os.FileMode
	// AllowUIDs (allow_uids) are the user ids whose engines may attach;
	// empty means only the node's own user.
	AllowUIDs []uint32
	// MaxFrame (max_frame) caps the body of a frame an engine sends,
	// from MinNodeFrame to MaxNodeFrame.
	MaxFrame int64
	// MaxAttempts (max_attempts) caps an engine's publishes, fetches and
	// lookups in flight, from 1 to MaxNodeAttempts.
	MaxAttempts int
	// MaxRows (max_rows) caps the rows of one publish, fetch or lookup,
	// from 1 to MaxNodeRows.
	MaxRows int
	// MaxLendBytes (max_lend_bytes) caps the bytes one engine lends,
	// every lend together, from 1 to MaxNodeLendBytes.
	MaxLendBytes int64
	// MaxRegions (max_regions) caps the regions of one lend, from 1 to
	// MaxNodeRegions.
	MaxRegions int
	// OutQueue (out_queue) is how many frames may wait for an engine to
	// read them, from 1 to MaxNodeOutQueue.
	OutQueue int
	// EngineWait (engine_wait, a duration: "10s") bounds how long an
	// engine's end, or a return, waits for access to its memory to end
	// before the node keeps the lend; from 1ms to MaxNodeWait.
	EngineWait time.Duration
	// ReclaimAbove (reclaim_above) starts a reclaim on its own once the
	// bytes the node holds (lends whose access could not be proven
	// ended) reach it, from 1 to MaxNodeLendBytes; 0 (left out): never.
	ReclaimAbove int64
	// ReclaimWait (reclaim_wait, a duration) bounds each automatic
	// reclaim; from 1ms to MaxNodeWait.
	ReclaimWait time.Duration
	// ShutdownWait (shutdown_wait, a duration) bounds how long the
	// shutdown waits for engines' memory to be given back; from 1ms to
	// MaxNodeWait.
	ShutdownWait time.Duration
	// RequireScope (require_scope) refuses an engine whose hello
	// declares no scope.
	RequireScope bool
	// Tenants (tenants, an array of strings, each a [NodeTenant]'s spec:
	// see [ParseNodeTenant]) say which peers may declare which tenant
	// in their scope, and each tenant's limits.
	Tenants []NodeTenant
}

// NodeTenant is one tenant of the node: the peers that may declare it
// (by uid or gid) and its limits over all its sessions (0: none).
type NodeTenant struct {
	Name                           string
	UIDs, GIDs                     []uint32
	MaxLentBytes, MaxBytesInFlight int64
	MaxAttemptsInFlight            int
}

// The keys of the [node] section, as a file spells them.
const (
	NodeSection     = "node"
	KeySocket       = "socket"
	KeyMode         = "mode"
	KeyAllowUIDs    = "allow_uids"
	KeyMaxFrame     = "max_frame"
	KeyMaxAttempts  = "max_attempts"
	KeyMaxRows      = "max_rows"
	KeyMaxLendBytes = "max_lend_bytes"
	KeyMaxRegions   = "max_regions"
	KeyOutQueue     = "out_queue"
	KeyEngineWait   = "engine_wait"
	KeyShutdownWait = "shutdown_wait"
	KeyReclaimAbove = "reclaim_above"
	KeyReclaimWait  = "reclaim_wait"
	KeyRequireScope = "require_scope"
	KeyTenants      = "tenants"
)

// NodeKeys lists the keys of the [node] section.
var NodeKeys = []string{KeySocket, KeyMode, KeyAllowUIDs, KeyMaxFrame, KeyMaxAttempts, KeyMaxRows,
	KeyMaxLendBytes, KeyMaxRegions, KeyOutQueue, KeyEngineWait, KeyShutdownWait, KeyReclaimAbove, KeyReclaimWait,
	KeyRequireScope, KeyTenants}

// The ranges of the [node] section. MinNodeFrame is the least frame a
// node takes: room for the largest hello (two lengths, a 64-byte engine
// name, a version and a 65,535-byte scope), which an engine sends
// before it learns the node's limit.
const (
	MinNodeFrame     = 2 + 2 + 64 + 2 + 65535
	MaxNodeFrame     = 1 << 30
	MaxNodeAttempts  = 1 << 16
	MaxNodeRows      = 1 << 20
	MaxNodeLendBytes = 1 << 46 // 64 TiB
	MaxNodeRegions   = 1 << 16
	MaxNodeOutQueue  = 1 << 20
	MinNodeWait      = time.Millisecond
	MaxNodeWait      = 24 * time.Hour
	// MaxSocketPath is the longest socket path a Unix address holds
	// (sun_path's 108 bytes, less the terminating NUL).
	MaxSocketPath = 107
)

// Validate checks n's values: each refusal an [*Error] naming the
// section and key (file: the file, or "" for settings built in code);
// several are joined. Zero values are left out, and valid.
func (n Node) Validate(file string) error { return n.Check(file).Err() }

// Check is Validate's refusals, one by one.
func (n Node) Check(file string) Findings {
	var errs Findings
	switch s := n.Socket; {
	case s == "":
	case !filepath.IsAbs(s):
		errs.Addf(file, NodeSection, KeySocket, "must be an absolute path, got %q", s)
	case len(s) > MaxSocketPath:
		errs.Addf(file, NodeSection, KeySocket, "is %d bytes, a Unix socket's path holds at most %d", len(s), MaxSocketPath)
	}
	if n.Mode&^os.ModePerm != 0 {
		errs.Addf(file, NodeSection, KeyMode, "must be permission bits from 0001 to 0777, got %#o", uint32(n.Mode))
	}
	inRange := func(key string, v, lo, hi int64) {
		if v != 0 {
			errs.InRange(file, NodeSection, key, v, lo, hi)
		}
	}
	inRange(KeyMaxFrame, n.MaxFrame, MinNodeFrame, MaxNodeFrame)
	inRange(KeyMaxAttempts, int64(n.MaxAttempts), 1, MaxNodeAttempts)
	inRange(KeyMaxRows, int64(n.MaxRows), 1, MaxNodeRows)
	inRange(KeyMaxLendBytes, n.MaxLendBytes, 1, MaxNodeLendBytes)
	inRange(KeyMaxRegions, int64(n.MaxRegions), 1, MaxNodeRegions)
	inRange(KeyOutQueue, int64(n.OutQueue), 1, MaxNodeOutQueue)
	inRange(KeyReclaimAbove, n.ReclaimAbove, 1, MaxNodeLendBytes)
	seen := map[string]bool{}
	for i, t := range n.Tenants {
		if err := t.check(); err != "" {
			errs.Addf(file, NodeSection, KeyTenants, "item %d: %s", i, err)
		} else if seen[t.Name] {
			errs.Addf(file, NodeSection, KeyTenants, "item %d: tenant %q is listed twice", i, t.Name)
		}
		seen[t.Name] = true
	}
	for _, w := range []struct {
		key string
		d   time.Duration
	}{{KeyEngineWait, n.EngineWait}, {KeyShutdownWait, n.ShutdownWait}, {KeyReclaimWait, n.ReclaimWait}} {
		if w.d != 0 && (w.d < MinNodeWait || w.d > MaxNodeWait) {
			errs.Addf(file, NodeSection, w.key, "must be from %v to %v, got %v", MinNodeWait, MaxNodeWait, w.d)
		}
	}
	return errs
}
