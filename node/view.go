package node

import (
	"github.com/kvshare/kvshare/binding"
	"github.com/kvshare/kvshare/contract"
	"github.com/kvshare/kvshare/keys"
)

// newView is a view of its own over the node's shared driver, as a
// driver (with the shared driver's optional interfaces): what a lend
// binds through, and what an engine's lookups ask.
func (n *Node) newView() contract.Driver { return n.shared.View().Driver() }

// backendConfig is the config of a lend's backend: its keys are made
// under the scope of the session that lent it (the zero Scope: none).
func (n *Node) backendConfig(scope keys.Scope) binding.Config {
	return binding.Config{
		KeyPrefix:       n.cfg.KeyPrefix,
		Scope:           scope,
		MaxRowsPerCall:  n.cfg.MaxRowsPerCall,
		MaxBytesPerCall: n.cfg.MaxBytesPerCall,
		Logger:          n.log,
	}
}
