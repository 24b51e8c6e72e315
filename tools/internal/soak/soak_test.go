package soak

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/kvshare/kvshare/contract"
	"github.com/kvshare/kvshare/memdrv"
)

// tiny is a soak short enough for the ordinary test run.
func tiny() Config {
	c := Defaults()
	c.Duration = 2 * time.Second
	c.Slots, c.RowBytes, c.ViewRows, c.Names = 24, 512, 8, 64
	c.Wait = 10 * time.Second
	return c
}

func TestASoakOverTheInMemoryStoreKeepsEveryPromise(t *testing.T) {
	rep, err := Run(context.Background(), tiny())
	require.NoError(t, err)
	t.Log(rep)
	assert.Positive(t, rep.Publishes)
	assert.Positive(t, rep.Fetches)
	assert.Positive(t, rep.RowsChecked, "fetches found published rows and checked them")
	assert.Positive(t, rep.MissesChecked)
	assert.EqualValues(t, 4+rep.Rebinds, rep.ShutdownsChecked, "every backend shut down clean")
	assert.EqualValues(t, 4, rep.MemoryFreed)
	assert.Positive(t, rep.Rows[contract.Ready])
}

// A store whose gets corrupt a delivered row: the soak must fail and say
// which row.
func TestASoakCatchesACorruptRow(t *testing.T) {
	cfg := tiny()
	cfg.Store = corruptingStore{store: memdrv.NewStore()}
	_, err := Run(context.Background(), cfg)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "differs from what was published")
	assert.Contains(t, err.Error(), "seed 1")
}

func TestConfigRefusals(t *testing.T) {
	for name, edit := range map[string]func(*Config){
		"duration":  func(c *Config) { c.Duration = 0 },
		"lenders":   func(c *Config) { c.Lenders = 0 },
		"slots":     func(c *Config) { c.Slots = 2 },
		"row bytes": func(c *Config) { c.RowBytes = 0 },
		"view rows": func(c *Config) { c.ViewRows = 0 },
		"names":     func(c *Config) { c.Names = 0 },
		"wait":      func(c *Config) { c.Wait = 0 },
	} {
		c := tiny()
		edit(&c)
		_, err := Run(context.Background(), c)
		assert.ErrorContains(t, err, name, name)
	}
}

// corruptingStore opens memdrv drivers that flip the first byte of
// every row a get delivers, keeping the verdict Ready.
type corruptingStore struct{ store *memdrv.Store }

func (corruptingStore) Describe() string { return "a corrupting in-memory store" }
func (corruptingStore) Workers() int     { return 2 }
func (c corruptingStore) OpenDriver(context.Context, string) (contract.Driver, error) {
	d := memdrv.New(c.store, memdrv.Options{Workers: 2})
	d.OnRowEnd(func(e memdrv.RowEnd) contract.RowStatus {
		if e.Dir == memdrv.GetDir && e.Status == contract.Ready {
			b := unsafeSlice(e.Spans[0])
			b[0] ^= 0xff
		}
		return e.Status
	})
	return d, nil
}
