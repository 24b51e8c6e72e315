package events

import (
	"errors"
	"fmt"
	"log/slog"
	"time"
)

// ErrConfig is wrapped by [Open]'s refusal of a config; the error names
// the field.
var ErrConfig = errors.New("kvshare/events: bad config")

// The bounds a zero field of [Config] stands for.
const (
	DefaultQueue         = 65536   // hook calls waiting for the publisher's goroutine
	DefaultReplayBatches = 10000   // as vLLM's buffer_steps
	DefaultAnnounced     = 1 << 20 // blocks remembered for BlockRemoved
	DefaultHWM           = 100000  // as vLLM's: batches queued for the PUB socket
	DefaultMedium        = "kvshare"
	DefaultWindow        = 10 * time.Millisecond
)

// Config is what [Open] builds a [Publisher] from. Only Endpoint is
// required.
type Config struct {
	// Endpoint is the PUB socket's, bound: "tcp://*:5557",
	// "tcp://127.0.0.1:0" (any free port: see [Publisher.Endpoint]).
	Endpoint string
	// ReplayEndpoint is the ROUTER socket's that answers replay
	// requests, bound; "" opens none.
	ReplayEndpoint string
	// Medium names the tier in every event (vLLM's medium field), e.g.
	// "kvshare:redis"; "" means DefaultMedium.
	Medium string
	// DataParallelRank is every batch's data_parallel_rank.
	DataParallelRank int
	// Queue bounds the hook calls waiting to be published: a call that
	// finds it full is dropped and counted (Stats.Dropped), never waited
	// for.
	Queue int
	// ReplayBatches bounds the batches kept for replay, every topic
	// together; older ones are gone.
	ReplayBatches int
	// Announced bounds the blocks remembered as announced: past it the
	// oldest is forgotten (Stats.Forgotten) and its later absence is not
	// published.
	Announced int
	// HWM bounds the batches the PUB socket queues; past it, it drops.
	HWM int
	// Window is how often the publisher publishes what the hook calls
	// since the last time told it: a batch per topic a window, at most
	// this late. A publish's hook call then wakes no goroutine.
	Window time.Duration
	// Logger receives the publisher's log; nil means slog.Default().
	Logger *slog.Logger
}

func (cfg Config) withDefaults() (Config, error) {
	if cfg.Endpoint == "" {
		return cfg, fmt.Errorf("%w: Endpoint is empty", ErrConfig)
	}
	for _, f := range []struct {
		name string
		v    int
	}{{"Queue", cfg.Queue}, {"ReplayBatches", cfg.ReplayBatches}, {"Announced", cfg.Announced}, {"HWM", cfg.HWM}, {"DataParallelRank", cfg.DataParallelRank}} {
		if f.v < 0 {
			return cfg, fmt.Errorf("%w: %s is negative (%d)", ErrConfig, f.name, f.v)
		}
	}
	set := func(v *int, d int) {
		if *v == 0 {
			*v = d
		}
	}
	if cfg.Window < 0 {
		return cfg, fmt.Errorf("%w: Window is negative (%v)", ErrConfig, cfg.Window)
	}
	if cfg.Window == 0 {
		cfg.Window = DefaultWindow
	}
	set(&cfg.Queue, DefaultQueue)
	set(&cfg.ReplayBatches, DefaultReplayBatches)
	set(&cfg.Announced, DefaultAnnounced)
	set(&cfg.HWM, DefaultHWM)
	if cfg.Medium == "" {
		cfg.Medium = DefaultMedium
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	return cfg, nil
}
