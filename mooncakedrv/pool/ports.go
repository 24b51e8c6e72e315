package pool

import "github.com/kvshare/kvshare/loopback"

// Host is the only address the pool's processes listen on by name.
const Host = loopback.Host
