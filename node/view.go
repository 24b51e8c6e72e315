package node

import (
	"github.com/kvshare/kvshare/binding"
	"github.com/kvshare/kvshare/contract"
)

// newView is a view of its own over the node's shared driver, as a
// driver (with the shared driver's optional interfaces): what a lend
// binds through, and what an engine's lookups ask.
func (n *Node) newView() contract.Driver { return n.shared.View().Driver() }

// backendConfig is the config of every lend's backend.
func (n *Node) backendConfig() binding.Config {
	return binding.Config{
		KeyPrefix:       n.cfg.KeyPrefix,
		MaxRowsPerCall:  n.cfg.MaxRowsPerCall,
		MaxBytesPerCall: n.cfg.MaxBytesPerCall,
		Logger:          n.log,
	}
}
