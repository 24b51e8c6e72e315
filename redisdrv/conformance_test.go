package redisdrv

import (
	"context"
	"slices"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/redis/rueidis"

	"github.com/kvshare/kvshare/conformance"
	"github.com/kvshare/kvshare/redisdrv/redistest"
)

func itoa(n int64) string { return strconv.FormatInt(n, 10) }

// realSubject builds conformance subjects over one real server: each a
// fresh driver whose client talks through a proxy of its own
// (redistest.Proxy), so that the proxy's rules of one check never reach
// another. The hooks:
//   - Seed and Object through the raw client, straight to the server;
//   - Full through maxmemory (1 byte, noeviction: every SET answers
//     OOM), undone when the next subject is built (checks run one after
//     another);
//   - Hold(PutDir) through CLIENT PAUSE … WRITE (the server holds SET,
//     not GET or EXISTS; the gate is held once the proxy saw a SET pass
//     after the pause); Hold(GetDir), HoldKeys and HoldLookups through the
//     proxy, which holds the replies (a GET's, a SET's, an EXISTS's) of
//     the matching commands and every reply behind them on the
//     connection;
//   - Crash through the proxy cutting the connection at the first
//     command of the direction (see crashes for a crash beside a row
//     held by key), FailReads through the proxy answering an
//     error reply for the keys' GETs;
//   - Pause through the driver's own worker pool.
//
// Writing stays nil: Redis has no "being written" state (a SET's value
// exists whole or not at all), so the checks that need another writer
// skip. UnprovableGets stays nil: no answer of the server leaves a
// get's access unprovable.
func realSubject(t *testing.T, s *server, cfg Config) func() (*conformance.Subject, error) {
	var mu sync.Mutex
	var proxies []*redistest.Proxy
	t.Cleanup(func() {
		mu.Lock()
		defer mu.Unlock()
		for _, p := range proxies {
			_ = p.Close()
		}
	})
	return func() (*conformance.Subject, error) {
		s.setMaxMemory(t, 0, "noeviction") // a full server of the check before is emptied of its limit
		p, err := redistest.NewProxy(s.Addr())
		if err != nil {
			return nil, err
		}
		mu.Lock()
		proxies = append(proxies, p)
		mu.Unlock()
		c := cfg
		c.Logger = testLogger(t)
		if c.CallTimeout == 0 {
			c.CallTimeout = 30 * time.Second // a gate may hold a call for the suite's whole Wait
		}
		d := driverVia(t, p.Addr(), c)
		x := &crashes{p: p}
		return &conformance.Subject{
			Driver: d,
			Seed:   func(key string, data []byte) { s.seed(t, key, data) },
			Object: func(key string) ([]byte, bool) { return s.object(t, key) },
			Full:   func() { s.setMaxMemory(t, 1, "noeviction") },
			Hold: func(dir conformance.Direction) conformance.Gate {
				if dir == conformance.PutDir {
					return s.pauseWrites(t, p)
				}
				return p.HoldReplies(redistest.Command("GET"))
			},
			HoldKeys: x.holdKeys,
			Crash:    x.crash,
			FailReads: func(keys ...string) {
				p.FailOn(redistest.Command("GET", keys...), "kvshare test: the read failed")
			},
			Pause:       func() func() { return d.pool.Pause() },
			HoldLookups: func(keys ...string) conformance.Gate { return p.HoldReplies(redistest.Command("EXISTS", keys...)) },
		}, nil
	}
}

func commandOf(dir conformance.Direction) string {
	if dir == conformance.PutDir {
		return "SET"
	}
	return "GET"
}

// writePause is Hold(PutDir): CLIENT PAUSE … WRITE on the server, held
// once a SET passed the subject's proxy after the pause began, released
// by CLIENT UNPAUSE.
type writePause struct {
	s     *server
	t     *testing.T
	p     *redistest.Proxy
	sets  int // the SETs the proxy had seen when the pause began
	once  sync.Once
	match redistest.Match
}

func (s *server) pauseWrites(t *testing.T, p *redistest.Proxy) *writePause {
	g := &writePause{s: s, t: t, p: p, match: redistest.Command("SET")}
	g.sets = p.Seen(g.match)
	// Long enough for any check; Release ends it sooner.
	if err := s.do(t, func(b rueidis.Builder) rueidis.Completed {
		return b.ClientPause().Timeout(120000).Write().Build()
	}).Error(); err != nil {
		t.Errorf("CLIENT PAUSE: %v", err)
	}
	return g
}

func (g *writePause) Held(ctx context.Context) error {
	for g.p.Seen(g.match) <= g.sets {
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(5 * time.Millisecond):
		}
	}
	return nil
}

func (g *writePause) Release() {
	g.once.Do(func() {
		if err := g.s.do(g.t, func(b rueidis.Builder) rueidis.Completed { return b.ClientUnpause().Build() }).Error(); err != nil {
			g.t.Errorf("CLIENT UNPAUSE: %v", err)
		}
	})
}

// TestConformance runs the whole suite, thorough, against a real
// server: with the default shape; with a row a part (each row its own
// pipeline, so held-sibling fails one row while another is held); and
// with one worker and two rows a part (parts queue behind one another).
func TestConformance(t *testing.T) {
	s := startServer(t, redistest.Options{})
	for _, tc := range []struct {
		name string
		cfg  Config
	}{
		{"default", Config{}},
		{"row-a-part", Config{RowsPerCall: 1}},
		{"one-worker", Config{Workers: 1, RowsPerCall: 2}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			conformance.Run(t, conformance.Harness{New: realSubject(t, s, tc.cfg), Thorough: true, Wait: 5 * time.Second})
		})
	}
}

// crashes stages Crash on a subject's proxy. The proxy cuts a
// connection when its replies reach the crashing command, so on a
// connection whose earlier reply a HoldKeys gate holds, the crash waits
// behind it (the gate's Holding says so). The held keys' own commands
// are held rather than crashed, and when a gate of a crashed direction
// is released the proxy cuts every connection instead of letting the
// held reply go: a part is one pipeline on one connection, and a crash
// strikes every row of it, the held row's round trip included.
type crashes struct {
	p     *redistest.Proxy
	mu    sync.Mutex
	armed map[conformance.Direction]bool
	gates []*keyGate // not released yet
}

func (x *crashes) crash(dir conformance.Direction) {
	x.mu.Lock()
	if x.armed == nil {
		x.armed = map[conformance.Direction]bool{}
	}
	x.armed[dir] = true
	x.mu.Unlock()
	is := redistest.Command(commandOf(dir))
	x.p.CrashOn(func(cmd [][]byte) bool {
		if !is(cmd) {
			return false
		}
		x.mu.Lock()
		defer x.mu.Unlock()
		for _, g := range x.gates {
			if g.dir == dir && redistest.Command(commandOf(dir), g.keys...)(cmd) {
				return false // held first; the gate's Release crashes it
			}
		}
		return true
	})
}

func (x *crashes) holdKeys(dir conformance.Direction, keys ...string) conformance.KeyGate {
	g := &keyGate{Hold: x.p.HoldReplies(redistest.Command(commandOf(dir), keys...)), x: x, dir: dir, keys: keys}
	x.mu.Lock()
	x.gates = append(x.gates, g)
	x.mu.Unlock()
	return g
}

// keyGate is a HoldKeys gate: the proxy's hold, released through the
// crash rule above.
type keyGate struct {
	*redistest.Hold
	x    *crashes
	dir  conformance.Direction
	keys []string
	once sync.Once
}

func (g *keyGate) Release() {
	g.once.Do(func() {
		g.x.mu.Lock()
		armed := g.x.armed[g.dir]
		g.x.gates = slices.DeleteFunc(g.x.gates, func(o *keyGate) bool { return o == g })
		g.x.mu.Unlock()
		if armed {
			g.x.p.DropAll()
		}
		g.Hold.Release()
	})
}
