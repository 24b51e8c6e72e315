package slotmap

import (
	"net"

	"github.com/redis/rueidis"
)

// NodeOption is the client option of the one node at addr, as the
// driver makes a cluster node's client: opt (a store file's,
// redisdrv.StoreConfig.ClientOption) with addr its only address, one
// server's client (no discovery, no redirect followed) and, over TLS
// without a name to verify, the node's own host verified.
func NodeOption(opt rueidis.ClientOption, addr string) rueidis.ClientOption {
	opt.InitAddress = []string{addr}
	opt.ForceSingleClient = true
	if opt.TLSConfig != nil && opt.TLSConfig.ServerName == "" {
		opt.TLSConfig = opt.TLSConfig.Clone()
		opt.TLSConfig.ServerName, _, _ = net.SplitHostPort(addr)
	}
	return opt
}
