package redisdrv

import (
	"cmp"
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"os"
	"time"

	"github.com/redis/rueidis"

	"github.com/kvshare/kvshare/storeconfig"
)

// ErrNoPassword is wrapped by [StoreConfig.ClientOption]'s error when
// the variable password_env names is unset or empty.
var ErrNoPassword = errors.New("redisdrv: the password variable is not set")

// Open reads the store file at path and opens it as [OpenConfig] does,
// returning the file's [blob] settings as well, for the backend
// (binding.FromBlob).
func Open(ctx context.Context, path string, logger *slog.Logger) (*Driver, storeconfig.Blob, error) {
	sc, err := LoadStoreConfig(path)
	if err != nil {
		return nil, storeconfig.Blob{}, err
	}
	d, err := OpenConfig(ctx, sc, logger)
	if err != nil {
		return nil, storeconfig.Blob{}, err
	}
	return d, sc.Blob, nil
}

// OpenConfig connects to the server a store config describes (checking
// it again first) and returns a driver over the client, with the
// section's worker and part settings. logger (nil: slog.Default())
// receives the driver's logs. Errors name what was wrong: the file,
// section and key of a refusal, the password variable, the address that
// did not answer. On any error nothing is left open.
func OpenConfig(ctx context.Context, sc StoreConfig, logger *slog.Logger) (*Driver, error) {
	if logger == nil {
		logger = slog.Default()
	}
	if err := sc.Validate(); err != nil {
		return nil, err
	}
	opt, err := sc.ClientOption()
	if err != nil {
		return nil, err
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	cfg := sc.Redis.DriverConfig()
	cfg.Logger = logger
	if sc.Redis.Cluster {
		d, err := NewCluster(ctx, opt, cfg)
		if err != nil {
			return nil, fmt.Errorf("redisdrv: %s: cluster seeds %v: %w", sc.File, opt.InitAddress, err)
		}
		return d, nil
	}
	client, err := rueidis.NewClient(opt)
	if err != nil {
		return nil, fmt.Errorf("redisdrv: %s: connecting to %s: %w", sc.File, sc.Redis.Address, err)
	}
	d, err := New(client, cfg)
	if err != nil {
		client.Close()
		return nil, fmt.Errorf("redisdrv: %s: %w", sc.File, err)
	}
	return d, nil
}

// ClientOption is the rueidis client option a store config describes,
// as the driver wants its client: one server (no cluster or sentinel
// discovery; for a cluster, InitAddress holds the starting addresses and the driver
// makes one such client a node), no client-side cache, the connection deadline no shorter
// than the longest part's round trip, at least Workers connections for
// the parts' streams. It reads the password variable now; unset, the
// error wraps [ErrNoPassword] and names it. A raw client built from it
// (a benchmark's floor, the doctor) talks to the server exactly as the
// driver's does.
func (sc StoreConfig) ClientOption() (rueidis.ClientOption, error) {
	r := sc.Redis
	opt := rueidis.ClientOption{
		InitAddress:       r.Seeds(),
		Username:          r.User,
		SelectDB:          r.DB,
		ForceSingleClient: true,
		DisableCache:      true,
		BlockingPoolSize:  max(r.PoolSize, cmp.Or(r.Workers, DefaultWorkers), 1),
		Dialer:            net.Dialer{Timeout: r.DialTimeout},
		ConnWriteTimeout:  ConnTimeout(r.DriverConfig()),
	}
	if r.PasswordEnv != "" {
		pw := os.Getenv(r.PasswordEnv)
		if pw == "" {
			return opt, fmt.Errorf("%w: %s: [redis] password_env names %s, which is unset or empty", ErrNoPassword, sc.File, r.PasswordEnv)
		}
		opt.Password = pw
	}
	if r.TLS {
		name := r.TLSServerName
		if name == "" && !r.Cluster {
			name, _, _ = net.SplitHostPort(r.Address)
		} // a cluster's nodes are each verified under their own host
		opt.TLSConfig = &tls.Config{ServerName: name, MinVersion: tls.VersionTLS12}
	}
	return opt, nil
}

// ConnTimeout is the connection deadline (rueidis ConnWriteTimeout) a
// client for a driver of cfg needs: at least 10 s, rueidis's default, and
// never shorter than the round trip of the largest part cfg cuts, so
// that the part's own bound is the one that ends it.
func ConnTimeout(cfg Config) time.Duration {
	c, err := cfg.withDefaults()
	if err != nil {
		c = cfg
	}
	return max(10*time.Second, c.callTimeout(c.BytesPerCall))
}
