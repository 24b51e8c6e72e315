package redistest

import (
	"fmt"
	"log/slog"
	"slices"
	"strconv"
	"strings"
	"time"
)

// Options says how to start a server. The zero value is usable: no memory
// limit, a port picked for it, logs in a temporary folder removed by Stop.
type Options struct {
	// MaxMemory is the maxmemory directive in bytes; 0 sets no limit.
	MaxMemory int64
	// Policy is the maxmemory-policy directive (see Policies); "" is
	// "noeviction", so a full server answers writes with an OOM error.
	Policy string
	// Port is the TCP port on 127.0.0.1; 0 picks a free one with
	// loopback.Pick (and picks again when the server exits at start
	// because another program took it first).
	Port int
	// StartTimeout bounds the wait for the server to accept a connection
	// and answer PING (default 10 s).
	StartTimeout time.Duration
	// StopTimeout bounds each stop step: SIGTERM, then SIGKILL after this
	// long, then the wait for the exit; it also bounds Freeze and Resume
	// (default 5 s).
	StopTimeout time.Duration
	// Dir is the server's working folder and holds its config
	// (redis.conf) and one log per start (redis-1.log, redis-2.log, …). It
	// is created when missing and kept. Empty: a temporary folder that Stop
	// removes once the process is gone, and that a failed Start keeps for
	// the log its error names.
	Dir string
	// Extra lists more config directives, name and value, written to
	// redis.conf after the server's own (a later directive wins), for
	// example {"hz", "100"}. The value is written as is, so it reads as
	// redis.conf text does: words are separate arguments
	// ({"client-output-buffer-limit", "pubsub 64mb 16mb 60"}), and a
	// double-quoted string is one.
	Extra [][2]string
	// Logger receives the server's own events (started, stopped); nil:
	// slog.Default().
	Logger *slog.Logger
}

// Policies lists the maxmemory-policy values Options.Policy accepts.
var Policies = []string{
	"noeviction", "allkeys-lru", "allkeys-lfu", "allkeys-random",
	"volatile-lru", "volatile-lfu", "volatile-random", "volatile-ttl",
}

// Option defaults.
const (
	DefaultStartTimeout = 10 * time.Second
	DefaultStopTimeout  = 5 * time.Second
)

// startAttempts is how many times Start launches a server on a picked port
// before giving up on early exits.
const startAttempts = 3

// withDefaults checks o and fills its zero fields.
func (o Options) withDefaults() (Options, error) {
	switch {
	case o.MaxMemory < 0:
		return o, fmt.Errorf("%w: MaxMemory %d is negative", ErrOptions, o.MaxMemory)
	case o.Port < 0 || o.Port > 65535:
		return o, fmt.Errorf("%w: Port %d is not a TCP port", ErrOptions, o.Port)
	case o.StartTimeout < 0 || o.StopTimeout < 0:
		return o, fmt.Errorf("%w: negative StartTimeout or StopTimeout", ErrOptions)
	case o.Policy != "" && !slices.Contains(Policies, o.Policy):
		return o, fmt.Errorf("%w: Policy %q is not one of %s", ErrOptions, o.Policy, strings.Join(Policies, ", "))
	}
	for _, d := range o.Extra {
		if !directiveName(d[0]) {
			return o, fmt.Errorf("%w: Extra directive name %q is not lower-case letters, digits and dashes", ErrOptions, d[0])
		}
		if strings.ContainsAny(d[1], "\r\n\x00") {
			return o, fmt.Errorf("%w: Extra directive %s has a line break or NUL in its value", ErrOptions, d[0])
		}
	}
	if o.Policy == "" {
		o.Policy = "noeviction"
	}
	if o.StartTimeout == 0 {
		o.StartTimeout = DefaultStartTimeout
	}
	if o.StopTimeout == 0 {
		o.StopTimeout = DefaultStopTimeout
	}
	if o.Logger == nil {
		o.Logger = slog.Default()
	}
	return o, nil
}

// directiveName reports whether name looks like a redis.conf directive.
func directiveName(name string) bool {
	if name == "" {
		return false
	}
	for _, r := range name {
		if (r < 'a' || r > 'z') && (r < '0' || r > '9') && r != '-' {
			return false
		}
	}
	return true
}

// config is the redis.conf text for a server on port with working folder
// dir: loopback only, no persistence, the log on standard output (which
// the launcher sends to the start's log file), each value quoted; then
// o.Extra as given.
func (o Options) config(port int, dir string) string {
	lines := [][2]string{
		{"bind", "127.0.0.1"},
		{"port", strconv.Itoa(port)},
		{"protected-mode", "no"},
		{"daemonize", "no"},
		{"supervised", "no"},
		{"save", ""},
		{"appendonly", "no"},
		{"logfile", ""},
		{"dir", dir},
		{"maxmemory", strconv.FormatInt(o.MaxMemory, 10)},
		{"maxmemory-policy", o.Policy},
	}
	var b strings.Builder
	b.WriteString("# written by redistest; a later directive wins\n")
	for _, d := range lines {
		fmt.Fprintf(&b, "%s %s\n", d[0], quoteConfig(d[1]))
	}
	for _, d := range o.Extra {
		fmt.Fprintf(&b, "%s %s\n", d[0], d[1])
	}
	return b.String()
}

// quoteConfig quotes a directive's value the way redis.conf reads
// double-quoted arguments, so spaces, quotes and an empty value survive.
func quoteConfig(v string) string {
	var b strings.Builder
	b.WriteByte('"')
	for i := 0; i < len(v); i++ {
		switch c := v[i]; {
		case c == '"' || c == '\\':
			b.WriteByte('\\')
			b.WriteByte(c)
		case c < 0x20 || c >= 0x7f:
			fmt.Fprintf(&b, "\\x%02x", c)
		default:
			b.WriteByte(c)
		}
	}
	b.WriteByte('"')
	return b.String()
}
