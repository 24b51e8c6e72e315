package redisdrv

import (
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/kvshare/kvshare/conformance"
	"github.com/kvshare/kvshare/redisdrv/redistest"
)

// clusterSubject builds conformance subjects over a three-node cluster:
// each a fresh driver seeded with the nodes' proxies, the hooks those of
// realSubject applied to every node (a gate holds on every proxy and is
// held once any holds a reply; Crash, FailReads and FailLookups arm every
// proxy;
// Hold(PutDir) pauses writes on every node). The proxies are the
// cluster's own (each node announces its proxy), so each new subject
// clears the rules the one before left. Seed and Object go straight to
// the node owning the key. Every subject's driver is kept in drivers, so
// the test can read their stats after the suite.
func clusterSubject(t *testing.T, c *cluster, cfg Config, drivers *[]*Driver) func() (*conformance.Subject, error) {
	var mu sync.Mutex
	return func() (*conformance.Subject, error) {
		ps := c.proxies()
		for _, p := range ps {
			p.Clear()
		}
		c.setMaxMemory(t, 0, "noeviction")
		cc := cfg
		cc.Logger = testLogger(t)
		if cc.CallTimeout == 0 {
			cc.CallTimeout = suiteCallTimeout
		}
		d := clusterDriver(t, c.Addrs(), cc)
		mu.Lock()
		*drivers = append(*drivers, d)
		mu.Unlock()
		x := &crashes{ps: ps}
		return &conformance.Subject{
			Driver: d,
			Seed:   func(key string, data []byte) { c.seed(t, key, data) },
			Object: func(key string) ([]byte, bool) { return c.object(t, key) },
			Full:   func() { c.setMaxMemory(t, 1, "noeviction") },
			Hold: func(dir conformance.Direction) conformance.Gate {
				if dir == conformance.PutDir {
					return pauseWrites(t, c.nodes, ps)
				}
				return holdOn(ps, redistest.Command("GET"))
			},
			HoldKeys: x.holdKeys,
			Crash:    x.crash,
			FailReads: func(keys ...string) {
				for _, p := range ps {
					p.FailOn(redistest.Command("GET", keys...), "kvshare test: the read failed")
				}
			},
			Pause:       func() func() { return d.Pause() },
			HoldLookups: func(keys ...string) conformance.Gate { return holdOn(ps, redistest.Command("EXISTS", keys...)) },
			FailLookups: func(keys ...string) {
				for _, p := range ps {
					p.FailOn(redistest.Command("EXISTS", keys...), "kvshare test: the lookup failed")
				}
			},
		}, nil
	}
}

// TestClusterConformance runs the whole suite, thorough, against a
// three-node cluster, in the default shape and with one worker and two
// rows a part. Keys are the suite's own, hashed over 16384 slots spread
// over three nodes, so the rows of one call land on different nodes; the
// drivers' PartsSplit proves that they did, in every shape.
func TestClusterConformance(t *testing.T) {
	c := startCluster(t, redistest.ClusterOptions{})
	for _, tc := range []struct {
		name string
		cfg  Config
	}{
		{"default", Config{}},
		{"one-worker", Config{Workers: 1, RowsPerCall: 2}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var drivers []*Driver
			conformance.Run(t, conformance.Harness{New: clusterSubject(t, c, tc.cfg, &drivers), Thorough: true, Wait: suiteWait})
			var parts, split int64
			for _, d := range drivers {
				st := d.Stats()
				parts += st.Parts
				split += st.PartsSplit
			}
			assert.Positive(t, split, "no part of the suite's %d had rows on more than one node", parts)
			t.Logf("%d subjects: %d parts, %d of them with rows on several nodes", len(drivers), parts, split)
		})
	}
}
