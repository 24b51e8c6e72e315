package mooncakedrv

import (
	"fmt"
	"hash/fnv"
	"io"
	"os"
	"sync"

	"github.com/kvshare/kvshare/contract"
)

// namedView is a view of one group: row i named names[i] in slot
// slots[i].
func namedView(names []string, slots []int) contract.View {
	g := contract.Group{Slots: make([]int32, len(slots)), Names: make([][]byte, len(names))}
	for i := range names {
		g.Slots[i] = int32(slots[i])
		g.Names[i] = []byte(names[i])
	}
	return contract.View{Groups: []contract.Group{g}}
}

// rowNames is n names: prefix-000, prefix-001, …
func rowNames(prefix string, n int) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = fmt.Sprintf("%s-%03d", prefix, i)
	}
	return out
}

// faultContent is the content of the row named name: the name and its
// hash, repeated.
func faultContent(name string, n int) []byte {
	b := make([]byte, n)
	tile(b, contentSeed(name))
	return b
}

// contentSeed is what faultContent repeats for name.
func contentSeed(name string) string {
	h := fnv.New64a()
	_, _ = h.Write([]byte(name))
	return fmt.Sprintf("%s#%016x|", name, h.Sum64())
}

// tile fills b with seed repeated, by doubling copies (fast under -race,
// unlike a loop over bytes).
func tile(b []byte, seed string) {
	n := copy(b, seed)
	for n < len(b) {
		n += copy(b[n:], b[:n])
	}
}

// switchWriter writes to a test's output until toStderr, then to the
// process's stderr (a kept lender logs after its test ended).
type switchWriter struct {
	mu sync.Mutex
	w  io.Writer
}

// Write writes p where the writer points now.
func (s *switchWriter) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.w.Write(p)
}

// toStderr points the writer at the process's stderr.
func (s *switchWriter) toStderr() {
	s.mu.Lock()
	s.w = os.Stderr
	s.mu.Unlock()
}
