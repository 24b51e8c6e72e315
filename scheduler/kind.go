package scheduler

import "strconv"

// Kind says which of the pool's two queues a part waits in.
type Kind uint8

// The two kinds of part. The zero Kind is not a kind: Submit refuses it.
const (
	// Get is a part that reads from the store into lent memory. Gets go
	// first.
	Get Kind = iota + 1
	// Put is a part that writes lent memory to the store. Puts run on at
	// most max(1, workers-1) workers at once.
	Put
)

// String returns "get", "put", or "Kind(n)" for a value that is neither.
func (k Kind) String() string {
	switch k {
	case Get:
		return "get"
	case Put:
		return "put"
	}
	return "Kind(" + strconv.Itoa(int(k)) + ")"
}

// valid reports whether k is Get or Put.
func (k Kind) valid() bool { return k == Get || k == Put }
