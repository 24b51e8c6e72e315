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
	"github.com/kvshare/kvshare/patience"
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
//     error reply for the keys' GETs, FailLookups the same for the
//     keys' EXISTS (the other names of a lookup are answered);
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
			c.CallTimeout = suiteCallTimeout
		}
		d := driverVia(t, p.Addr(), c)
		x := &crashes{ps: []*redistest.Proxy{p}}
		return &conformance.Subject{
			Driver: d,
			Seed:   func(key string, data []byte) { s.seed(t, key, data) },
			Object: func(key string) ([]byte, bool) { return s.object(t, key) },
			Full:   func() { s.setMaxMemory(t, 1, "noeviction") },
			Hold: func(dir conformance.Direction) conformance.Gate {
				if dir == conformance.PutDir {
					return pauseWrites(t, []*server{s}, []*redistest.Proxy{p})
				}
				return holdOn([]*redistest.Proxy{p}, redistest.Command("GET"))
			},
			HoldKeys: x.holdKeys,
			Crash:    x.crash,
			FailReads: func(keys ...string) {
				p.FailOn(redistest.Command("GET", keys...), "kvshare test: the read failed")
			},
			Pause:       func() func() { return d.Pause() },
			HoldLookups: func(keys ...string) conformance.Gate { return p.HoldReplies(redistest.Command("EXISTS", keys...)) },
			FailLookups: func(keys ...string) {
				p.FailOn(redistest.Command("EXISTS", keys...), "kvshare test: the lookup failed")
			},
		}, nil
	}
}

func commandOf(dir conformance.Direction) string {
	if dir == conformance.PutDir {
		return "SET"
	}
	return "GET"
}

// writePause is Hold(PutDir): CLIENT PAUSE … WRITE on every server
// (one, or a cluster's nodes), held once a SET passed one of the
// subject's proxies after the pause began, released by CLIENT UNPAUSE.
type writePause struct {
	servers []*server
	t       *testing.T
	ps      []*redistest.Proxy
	sets    int // the SETs the proxies had seen when the pause began
	once    sync.Once
	match   redistest.Match
}

func pauseWrites(t *testing.T, servers []*server, ps []*redistest.Proxy) *writePause {
	g := &writePause{servers: servers, t: t, ps: ps, match: redistest.Command("SET")}
	g.sets = g.seen()
	for _, s := range servers {
		// Long enough for any check, however patient the run; Release
		// ends it sooner.
		if err := s.do(t, func(b rueidis.Builder) rueidis.Completed {
			return b.ClientPause().Timeout(4 * suiteCallTimeout.Milliseconds()).Write().Build()
		}).Error(); err != nil {
			t.Errorf("CLIENT PAUSE: %v", err)
		}
	}
	return g
}

func (g *writePause) seen() int {
	n := 0
	for _, p := range g.ps {
		n += p.Seen(g.match)
	}
	return n
}

func (g *writePause) Held(ctx context.Context) error {
	for g.seen() <= g.sets {
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
		for _, s := range g.servers {
			if err := s.do(g.t, func(b rueidis.Builder) rueidis.Completed { return b.ClientUnpause().Build() }).Error(); err != nil {
				g.t.Errorf("CLIENT UNPAUSE: %v", err)
			}
		}
	})
}

// suiteWait is the harness's Wait on a real server or cluster, whose
// answers come in milliseconds; the suite scales it by
// KVSHARE_WAIT_SCALE.
const suiteWait = 5 * time.Second

// suiteCallTimeout is the drivers' CallTimeout under the suite: a gate
// may hold a call for the suite's whole Wait, extended as often as
// patience allows, so it outlasts that, scaled as the suite scales its
// Wait, with a margin (30 s at scale 1).
var suiteCallTimeout = patience.Scaled(time.Duration(1+patience.MaxExtensions)*suiteWait + 10*time.Second)

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
			conformance.Run(t, conformance.Harness{New: realSubject(t, s, tc.cfg), Thorough: true, Wait: suiteWait})
		})
	}
}

// crashes stages Crash on a subject's proxies (one a server, or one a
// cluster node). A proxy cuts a connection when its replies reach the
// crashing command, so on a connection whose earlier reply a HoldKeys
// gate holds, the crash waits behind it (the gate's Holding says so).
// The held keys' own commands are held rather than crashed, and when a
// gate of a crashed direction is released the proxies cut every
// connection instead of letting the held reply go: a part is one
// pipeline a server, and a crash strikes every row of it, the held
// row's round trip included.
type crashes struct {
	ps    []*redistest.Proxy
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
	for _, p := range x.ps {
		p.CrashOn(func(cmd [][]byte) bool {
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
}

func (x *crashes) holdKeys(dir conformance.Direction, keys ...string) conformance.KeyGate {
	g := &keyGate{holds: holdOn(x.ps, redistest.Command(commandOf(dir), keys...)), x: x, dir: dir, keys: keys}
	x.mu.Lock()
	x.gates = append(x.gates, g)
	x.mu.Unlock()
	return g
}

// keyGate is a HoldKeys gate: the proxies' holds, released through the
// crash rule above.
type keyGate struct {
	holds
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
			for _, p := range g.x.ps {
				p.DropAll()
			}
		}
		g.holds.Release()
	})
}

// holds is one hold a proxy, as one gate: held once any of them holds a
// reply, holding a key when any of them does.
type holds []*redistest.Hold

func holdOn(ps []*redistest.Proxy, m redistest.Match) holds {
	hs := make(holds, len(ps))
	for i, p := range ps {
		hs[i] = p.HoldReplies(m)
	}
	return hs
}

func (hs holds) Held(ctx context.Context) error {
	if len(hs) == 1 {
		return hs[0].Held(ctx)
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	errs := make(chan error, len(hs))
	for _, h := range hs {
		go func() { errs <- h.Held(ctx) }()
	}
	var err error
	for range hs {
		if err = <-errs; err == nil {
			return nil
		}
	}
	return err
}

func (hs holds) Holding(key string) bool {
	return slices.ContainsFunc(hs, func(h *redistest.Hold) bool { return h.Holding(key) })
}

func (hs holds) Release() {
	for _, h := range hs {
		h.Release()
	}
}
