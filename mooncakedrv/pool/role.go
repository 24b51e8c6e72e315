package pool

// Role names a process of the pool.
type Role string

// The pool's two processes.
const (
	Master   Role = "master"
	Provider Role = "provider"
)
