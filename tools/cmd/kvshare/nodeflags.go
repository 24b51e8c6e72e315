package main

import (
	"flag"
	"fmt"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/kvshare/kvshare/node"
	"github.com/kvshare/kvshare/storeconfig"
)

// nodeFlags are kvshare node's flags that shape the node itself: its
// socket, who may attach, its limits. Each has a key of the store
// file's [node] section; a flag given on the command line overrides the
// file's key, a key the file gives overrides the flag's default.
type nodeFlags struct {
	fs           *flag.FlagSet
	socket       *string
	mode         *string
	allow        *string
	maxLend      *string
	maxAttempts  *int
	maxRows      *int
	engineWait   *time.Duration
	shutdownWait *time.Duration
	reclaimAbove *string
	reclaimWait  *time.Duration
	requireScope *bool
	tenants      tenantFlags
}

// tenantFlags are --tenant's specs, one a flag.
type tenantFlags []string

func (t *tenantFlags) String() string     { return strings.Join(*t, "; ") }
func (t *tenantFlags) Set(s string) error { *t = append(*t, s); return nil }

// addNodeFlags registers the node's flags on fs.
func addNodeFlags(fs *flag.FlagSet) *nodeFlags {
	f := &nodeFlags{
		fs:           fs,
		socket:       fs.String("socket", defaultSocket(), "path of the node's Unix socket (default $XDG_RUNTIME_DIR/kvshare/node.sock when that is set; [node] socket)"),
		mode:         fs.String("mode", "0600", "file mode of the socket, in octal: who may connect at all ([node] mode)"),
		allow:        fs.String("allow-uid", "", "user ids whose engines may attach, comma-separated (default: this process's own; [node] allow_uids)"),
		maxLend:      fs.String("max-lend-bytes", "", "bytes one engine may lend, all its lends together (default 64GiB; [node] max_lend_bytes)"),
		maxAttempts:  fs.Int("max-attempts", 0, "publishes, fetches and lookups one engine may have in flight (default 64; [node] max_attempts)"),
		maxRows:      fs.Int("max-rows", 0, "rows of one publish, fetch or lookup (default 8192; [node] max_rows)"),
		engineWait:   fs.Duration("engine-wait", 0, "how long an engine's end, or a return, waits for access to its memory to end before the node keeps it (default 10s; [node] engine_wait)"),
		shutdownWait: fs.Duration("shutdown-wait", time.Minute, "how long the shutdown waits for engines' memory to be given back ([node] shutdown_wait)"),
		reclaimAbove: fs.String("reclaim-above", "", "reclaim on its own once the memory the node holds (access not proven ended) reaches this size, such as 8GiB; a reclaim recycles the store client every engine shares (default: never; [node] reclaim_above)"),
		reclaimWait:  fs.Duration("reclaim-wait", 0, "bound of each automatic reclaim (default 90s; [node] reclaim_wait)"),
		requireScope: fs.Bool("require-scope", false, "refuse an engine whose hello declares no scope ([node] require_scope)"),
	}
	fs.Var(&f.tenants, "tenant", "a tenant engines may declare in their scope, and its limits, as \"uids=1000,1001 gids=100 max_lent_bytes=8589934592 max_bytes_in_flight=1073741824 max_attempts_in_flight=32 tenant=NAME\" (NAME last, taken as it is; ids and limits optional); repeat it for each tenant; given, the flags replace the file's list (default: only the tenant \"\", every allowed peer, unlimited; [node] tenants)")
	return f
}

// given reports whether the flag was set on the command line.
func (f *nodeFlags) given(name string) bool { return flagSet(f.fs, name) }

// config is the node's config from the store file's [node] section (the
// zero Node without one) and the flags, a flag given overriding the
// file; and the shutdown's bound. line says what is wrong, or is "".
func (f *nodeFlags) config(file storeconfig.Node) (cfg node.Config, shutdownWait time.Duration, line string) {
	cfg = node.Config{
		Socket: file.Socket, Mode: file.Mode, AllowUIDs: file.AllowUIDs,
		MaxFrame: uint32(file.MaxFrame), MaxAttempts: file.MaxAttempts, MaxRows: file.MaxRows,
		MaxLendBytes: file.MaxLendBytes, MaxRegions: file.MaxRegions, OutQueue: file.OutQueue,
		EngineWait: file.EngineWait, ReclaimAbove: file.ReclaimAbove, ReclaimWait: file.ReclaimWait,
		RequireScope: file.RequireScope,
	}
	shutdownWait = file.ShutdownWait
	if cfg.Socket == "" || f.given("socket") {
		cfg.Socket = *f.socket
	}
	if cfg.Socket == "" {
		return cfg, 0, "--socket PATH is required (XDG_RUNTIME_DIR is not set to default it, nor [node] socket)"
	}
	if cfg.Mode == 0 || f.given("mode") {
		m, err := strconv.ParseUint(*f.mode, 8, 32)
		if err != nil || m == 0 || m > 0o777 {
			return cfg, 0, fmt.Sprintf("--mode %q: want permission bits in octal, such as 0600 or 0660", *f.mode)
		}
		cfg.Mode = os.FileMode(m)
	}
	if f.given("allow-uid") {
		cfg.AllowUIDs = nil
		for s := range strings.SplitSeq(*f.allow, ",") {
			if s = strings.TrimSpace(s); s == "" {
				continue
			}
			uid, err := strconv.ParseUint(s, 10, 32)
			if err != nil {
				return cfg, 0, fmt.Sprintf("--allow-uid: %q is not a user id", s)
			}
			cfg.AllowUIDs = append(cfg.AllowUIDs, uint32(uid))
		}
	}
	if f.given("max-lend-bytes") {
		n, err := parseSize(*f.maxLend)
		if err != nil || n == 0 {
			return cfg, 0, fmt.Sprintf("--max-lend-bytes %q: want a size above 0, such as 16GiB", *f.maxLend)
		}
		cfg.MaxLendBytes = n
	}
	if f.given("max-attempts") {
		cfg.MaxAttempts = *f.maxAttempts
	}
	if f.given("max-rows") {
		cfg.MaxRows = *f.maxRows
	}
	if f.given("engine-wait") {
		cfg.EngineWait = *f.engineWait
	}
	if f.given("reclaim-above") {
		n, err := parseSize(*f.reclaimAbove)
		if err != nil || n == 0 {
			return cfg, 0, fmt.Sprintf("--reclaim-above %q: want a size above 0, such as 8GiB", *f.reclaimAbove)
		}
		cfg.ReclaimAbove = n
	}
	if f.given("reclaim-wait") {
		cfg.ReclaimWait = *f.reclaimWait
	}
	if f.given("require-scope") {
		cfg.RequireScope = *f.requireScope
	}
	if f.given("tenant") {
		file.Tenants = nil
		for _, spec := range f.tenants {
			t, err := storeconfig.ParseNodeTenant(spec)
			if err != nil {
				return cfg, 0, fmt.Sprintf("--tenant: %v", err)
			}
			file.Tenants = append(file.Tenants, t)
		}
		if err := (storeconfig.Node{Tenants: file.Tenants}).Validate(""); err != nil {
			return cfg, 0, fmt.Sprintf("--tenant: %v", err)
		}
	}
	for _, t := range file.Tenants {
		cfg.Tenants = append(cfg.Tenants, node.Tenant{Name: t.Name, UIDs: t.UIDs, GIDs: t.GIDs,
			MaxLentBytes: t.MaxLentBytes, MaxBytesInFlight: t.MaxBytesInFlight, MaxAttemptsInFlight: t.MaxAttemptsInFlight})
	}
	if shutdownWait == 0 || f.given("shutdown-wait") {
		shutdownWait = *f.shutdownWait
	}
	if shutdownWait <= 0 {
		return cfg, 0, fmt.Sprintf("--shutdown-wait %v: want a duration above 0", shutdownWait)
	}
	return cfg, shutdownWait, ""
}
