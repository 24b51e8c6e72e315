package events_test

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/kvshare/kvshare/patience"
)

// debianPython is the interpreter the outside subscriber runs under:
// Debian's, with its python3-zmq and python3-msgpack.
const debianPython = "/usr/bin/python3"

// subscriberPython returns the interpreter for testdata/subscriber.py,
// or skips the test in one line when Debian's lacks zmq or msgpack and
// KVSHARE_EVENTS_PYTHON does not name one (set, it must work: CI sets
// it).
func subscriberPython(t *testing.T) string {
	t.Helper()
	py, required := os.Getenv("KVSHARE_EVENTS_PYTHON"), true
	if py == "" {
		py, required = debianPython, false
	}
	out, err := exec.Command(py, "-c", "import zmq, msgpack").CombinedOutput()
	if err != nil {
		if required {
			t.Fatalf("KVSHARE_EVENTS_PYTHON=%s cannot import zmq and msgpack: %v\n%s", py, err, out)
		}
		t.Skipf("%s lacks zmq or msgpack (apt-get install python3-zmq python3-msgpack) and KVSHARE_EVENTS_PYTHON is unset", py)
	}
	return py
}

// seenBatch is one batch the subscriber took, as it printed it.
type seenBatch struct {
	Seq    uint64      `json:"seq"`
	How    string      `json:"how"` // live or replay
	TS     float64     `json:"ts"`
	Rank   *int64      `json:"rank"`
	Events []seenEvent `json:"events"`
}

type seenEvent struct {
	Type      string   `json:"type"`
	Hashes    []string `json:"block_hashes"`
	Parent    any      `json:"parent_block_hash"`
	TokenIDs  []int64  `json:"token_ids"`
	BlockSize int64    `json:"block_size"`
	LoraID    any      `json:"lora_id"`
	Medium    *string  `json:"medium"`
	LoraName  *string  `json:"lora_name"`
}

// subscription is what the subscriber saw so far: the batches it took
// in order, the gaps it found and the live batches it dropped on
// purpose.
type subscription struct {
	Batches []seenBatch
	Gaps    [][2]uint64
	Dropped []uint64
}

// subscriber is testdata/subscriber.py running: ready once its sockets
// are connected.
type subscriber struct {
	cmd    *exec.Cmd
	stdin  io.WriteCloser
	lines  chan string // closed when its output ends
	stderr *os.File
	seen   subscription
}

// startSubscriber runs the outside subscriber on topic; with dropOne,
// once it took a batch live it drops the next live batch it would take.
func startSubscriber(t *testing.T, ctx context.Context, py, pub, replay, topic string, dropOne bool) *subscriber {
	t.Helper()
	cmd := exec.CommandContext(ctx, py, filepath.Join("testdata", "subscriber.py"), "--pub", pub, "--replay", replay,
		"--topic", topic, "--wait-ms", strconv.FormatInt(patience.Wait().Milliseconds(), 10))
	if dropOne {
		cmd.Args = append(cmd.Args, "--drop-one")
	}
	cmd.Env = append(os.Environ(), "PYTHONDONTWRITEBYTECODE=1")
	stderr, err := os.CreateTemp(t.TempDir(), "subscriber-stderr")
	require.NoError(t, err)
	cmd.Stderr = stderr
	out, err := cmd.StdoutPipe()
	require.NoError(t, err)
	stdin, err := cmd.StdinPipe()
	require.NoError(t, err)
	require.NoError(t, cmd.Start())
	s := &subscriber{cmd: cmd, stdin: stdin, lines: make(chan string, 64), stderr: stderr}
	go func() {
		defer close(s.lines)
		sc := bufio.NewScanner(out)
		sc.Buffer(make([]byte, 0, 1<<16), 1<<24)
		for sc.Scan() {
			s.lines <- sc.Text()
		}
	}()
	t.Cleanup(func() {
		_ = stdin.Close()
		for range s.lines { // it ends at its input's end, or killed with the test's context
		}
		_ = cmd.Wait()
	})
	require.JSONEq(t, `{"ready": true}`, s.next(t, ctx), "the subscriber's first line")
	return s
}

func (s *subscriber) next(t *testing.T, ctx context.Context) string {
	t.Helper()
	select {
	case line, ok := <-s.lines:
		if ok {
			return line
		}
		_ = s.cmd.Wait()
		msg, _ := os.ReadFile(s.stderr.Name())
		t.Fatalf("the subscriber ended: %v\n%s", s.cmd.ProcessState, msg)
	case <-ctx.Done():
		msg, _ := os.ReadFile(s.stderr.Name())
		t.Fatalf("no line from the subscriber: %v\n%s", ctx.Err(), msg)
	}
	return ""
}

// until reads the subscriber's lines until it has taken the batch seq,
// and returns what it saw so far.
func (s *subscriber) until(t *testing.T, ctx context.Context, seq uint64) subscription {
	t.Helper()
	return s.untilSeen(t, ctx, func(seen subscription) bool { return len(seen.Batches) > int(seq) })
}

// untilSeen reads the subscriber's lines until what it saw satisfies
// enough, and returns it.
func (s *subscriber) untilSeen(t *testing.T, ctx context.Context, enough func(subscription) bool) subscription {
	t.Helper()
	for !enough(s.seen) {
		line := s.next(t, ctx)
		var probe map[string]json.RawMessage
		require.NoError(t, json.Unmarshal([]byte(line), &probe), "line %q", line)
		switch {
		case probe["gap"] != nil:
			var g struct{ Gap [2]uint64 }
			require.NoError(t, json.Unmarshal([]byte(line), &g))
			s.seen.Gaps = append(s.seen.Gaps, g.Gap)
		case probe["dropped"] != nil:
			var d struct{ Dropped uint64 }
			require.NoError(t, json.Unmarshal([]byte(line), &d))
			s.seen.Dropped = append(s.seen.Dropped, d.Dropped)
		case probe["replay_unanswered"] != nil:
			t.Fatalf("the replay socket did not answer: %s", line)
		default:
			var b seenBatch
			require.NoError(t, json.Unmarshal([]byte(line), &b), "line %q", line)
			s.seen.Batches = append(s.seen.Batches, b)
		}
	}
	return s.seen
}

// replayedTheLoss checks the subscriber lost one live batch, saw the gap
// it left, and took that batch from the replay socket.
func replayedTheLoss(t *testing.T, got subscription) {
	t.Helper()
	require.Len(t, got.Dropped, 1, "the subscriber lost a live batch")
	dropped := got.Dropped[0]
	assert.Contains(t, got.Gaps, [2]uint64{dropped, dropped + 1}, "and saw the gap")
	require.Greater(t, len(got.Batches), int(dropped))
	assert.Equal(t, "replay", got.Batches[dropped].How, "and took the lost batch from the replay socket")
}

// live reports whether a batch the subscriber took arrived live:
// its subscription has reached the publisher.
func (s subscription) live() bool {
	for _, b := range s.Batches {
		if b.How == "live" {
			return true
		}
	}
	return false
}

// storedNames lists the block hashes of every BlockStored the batches
// carry, in order, and checks each batch's sequence follows the last.
func storedNames(t *testing.T, batches []seenBatch) []string {
	t.Helper()
	var names []string
	for i, b := range batches {
		require.Equal(t, uint64(i), b.Seq, "batches taken in sequence order")
		for _, ev := range b.Events {
			if ev.Type == "BlockStored" {
				names = append(names, ev.Hashes...)
			}
		}
	}
	return names
}

func hexNames(names ...[]byte) []string {
	out := make([]string, len(names))
	for i, n := range names {
		out[i] = fmt.Sprintf("%x", n)
	}
	return out
}
