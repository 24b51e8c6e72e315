package events

import (
	"encoding/binary"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func be8(v uint64) []byte { return binary.BigEndian.AppendUint64(nil, v) }

// A replay request as REQ, as a DEALER with and without a delimiter,
// with and without a topic; bad ones refused naming what was wrong.
func TestParseReplay(t *testing.T) {
	id := []byte("peer")
	for _, c := range []struct {
		name   string
		frames [][]byte
		want   replayRequest
		err    string
	}{
		{"vLLM's request (REQ)", [][]byte{id, {}, be8(7)}, replayRequest{peer: id, delimited: true, start: 7}, ""},
		{"with a topic", [][]byte{id, {}, be8(0), []byte("abc")}, replayRequest{peer: id, delimited: true, topic: "abc", named: true}, ""},
		{"a DEALER without delimiter", [][]byte{id, be8(9), []byte("t")}, replayRequest{peer: id, start: 9, topic: "t", named: true}, ""},
		{"no frames", nil, replayRequest{}, "no frames"},
		{"no start", [][]byte{id, {}}, replayRequest{}, "no start sequence frame"},
		{"a short start", [][]byte{id, {}, {1, 2, 3}}, replayRequest{}, "a start sequence of 3 bytes, want 8"},
		{"a long start", [][]byte{id, {}, make([]byte, 9)}, replayRequest{}, "a start sequence of 9 bytes, want 8"},
		{"a negative start", [][]byte{id, {}, be8(1 << 63)}, replayRequest{}, "is negative"},
		{"too many frames", [][]byte{id, {}, be8(1), {'t'}, {'x'}}, replayRequest{}, "3 frames after the delimiter"},
		{"a long topic", [][]byte{id, {}, be8(1), []byte(strings.Repeat("t", MaxTopicBytes+1))}, replayRequest{}, "a topic of 65 bytes, over the limit of 64"},
	} {
		t.Run(c.name, func(t *testing.T) {
			got, err := parseReplay(c.frames)
			if c.err != "" {
				require.ErrorIs(t, err, ErrReplayRequest)
				assert.ErrorContains(t, err, c.err)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, c.want, got)
		})
	}
}

// parseReplay never panics, and what it accepts is exactly the form it
// documents.
func FuzzParseReplay(f *testing.F) {
	f.Add([]byte("peer"), []byte{}, be8(3), []byte("topic"), uint8(3))
	f.Add([]byte("p"), be8(1), []byte{}, []byte{}, uint8(2))
	f.Add([]byte{}, []byte{0xff}, []byte{}, []byte{}, uint8(4))
	f.Fuzz(func(t *testing.T, a, b, c, d []byte, n uint8) {
		frames := [][]byte{a, b, c, d}[:n%5]
		r, err := parseReplay(frames)
		if err != nil {
			require.ErrorIs(t, err, ErrReplayRequest)
			return
		}
		rest := frames[1:]
		if r.delimited {
			require.Empty(t, rest[0])
			rest = rest[1:]
		}
		require.Len(t, rest[0], SeqBytes)
		require.Equal(t, binary.BigEndian.Uint64(rest[0]), r.start)
		require.Less(t, r.start, uint64(1<<63))
		require.Equal(t, len(rest) == 2, r.named)
		if r.named {
			require.Equal(t, string(rest[1]), r.topic)
		}
	})
}

// The replay buffer keeps the last batches of every topic together and
// answers a topic's from a start on; a request naming no topic is
// answered only while one topic was published.
func TestReplayBuffer(t *testing.T) {
	b := newReplayBuffer(4)
	_, ok := b.since(replayRequest{})
	assert.False(t, ok, "no topic yet: nothing to answer")
	b.add(sent{topic: "a", seq: 0})
	b.add(sent{topic: "a", seq: 1})
	got, ok := b.since(replayRequest{start: 1})
	require.True(t, ok, "one topic: a request without one means it")
	assert.Equal(t, []sent{{topic: "a", seq: 1}}, got)
	b.add(sent{topic: "b", seq: 0})
	b.add(sent{topic: "a", seq: 2})
	b.add(sent{topic: "a", seq: 3}) // the ring wraps: a/0 is gone
	_, ok = b.since(replayRequest{})
	assert.False(t, ok, "two topics: a request must name its own")
	got, ok = b.since(replayRequest{topic: "a", named: true})
	require.True(t, ok)
	assert.Equal(t, []sent{{topic: "a", seq: 1}, {topic: "a", seq: 2}, {topic: "a", seq: 3}}, got, "oldest first, the bound kept")
	got, _ = b.since(replayRequest{topic: "b", named: true})
	assert.Equal(t, []sent{{topic: "b", seq: 0}}, got)
}
