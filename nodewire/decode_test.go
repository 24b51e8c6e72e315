package nodewire

import (
	"strings"
	"testing"
	"time"

	"github.com/kvshare/kvshare/contract"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestDecodeBad: each malformed body is refused with an error that names
// the field and says what was wrong with it.
func TestDecodeBad(t *testing.T) {
	group := func(region uint32, slots []uint32, ns []byte) []byte {
		return body(u32b(region), appendU32s(nil, slots), ns)
	}
	okGroup := group(0, []uint32{1}, appendNames(nil, names("a")))
	tests := []struct {
		name  string
		typ   Type
		body  []byte
		code  Code
		error string
	}{
		{"names decreasing in a third group", TypePublish,
			body(transferHead(3), okGroup, okGroup, group(2, []uint32{1, 2}, body(u32b(2), u32b(5), u32b(3), []byte("abcde")))),
			CodeBadNames, "nodewire: publish: group 2: names: end 3 < previous 5"},
		{"empty name", TypeFetch,
			body(transferHead(1), group(0, []uint32{1, 2}, body(u32b(2), u32b(2), u32b(2), []byte("ab")))),
			CodeBadNames, "nodewire: fetch: group 0: names: name 1 empty (end 2)"},
		{"names count under rows", TypePublish,
			body(transferHead(1), group(0, []uint32{1, 2, 3}, appendNames(nil, names("a", "b")))),
			CodeBadNames, "nodewire: publish: group 0: names: 2 names for 3 rows"},
		{"names count over rows", TypePublish,
			body(transferHead(1), group(0, nil, appendNames(nil, names("a")))),
			CodeBadNames, "nodewire: publish: group 0: names: 1 names for 0 rows"},
		{"names blob short", TypeLookup,
			body([]byte{0}, u32b(1), u32b(1), u32b(4), []byte("abc")),
			CodeProtocol, "nodewire: lookup: group 0: names: truncated: 4 bytes wanted at offset 13, 3 left"},
		{"names ends cut", TypeLookup,
			body([]byte{0}, u32b(1), u32b(3), u32b(1)),
			CodeProtocol, "nodewire: lookup: group 0: names: truncated: count 3 of 4-byte elements, 4 bytes left"},
		{"slots count over the body", TypePublish,
			body(transferHead(1), u32b(0), u32b(1000), u32b(0)),
			CodeProtocol, "nodewire: publish: group 0: slots: truncated: count 1000 of 4-byte elements, 4 bytes left"},
		{"groups count over the body", TypeFetch, transferHead(2),
			CodeProtocol, "nodewire: fetch: groups: truncated: count 2 of 12-byte elements, 0 bytes left"},
		{"deadline over int64", TypePublish, body(u32b(1), u64b(1<<63+5), u32b(0)),
			CodeProtocol, "nodewire: publish: deadline_ns: 9223372036854775813 over 2^63-1"},
		{"trailing bytes after groups", TypePublish, body(transferHead(1), okGroup, []byte{9, 9}),
			CodeProtocol, "nodewire: publish: 2 bytes left over after the last field"},
		{"empty body of a lend", TypeLend, nil,
			CodeProtocol, "nodewire: lend: slot_bytes: truncated: 8 bytes wanted at offset 0, 0 left"},
		{"hello engine over 64 bytes", TypeHello, body(u16b(1), strb(strings.Repeat("é", 33)), strb("")),
			CodeProtocol, "nodewire: hello: engine: 66 bytes, want 1 to 64"},
		{"hello scope not utf-8", TypeHello, body(u16b(1), strb("e"), u16b(1), []byte{0xff}),
			CodeProtocol, "nodewire: hello: scope: not valid UTF-8"},
		{"lookup every 7", TypeLookup, body([]byte{7}, u32b(0)),
			CodeProtocol, "nodewire: lookup: every: 7, want 0 or 1"},
		{"outcome status 9 in row 1", TypeOutcome, body(u32b(2), []byte{1, 9}, u16b(0), strb("")),
			CodeProtocol, "nodewire: outcome: rows: value 9 of row 1 over 6"},
		{"outcome fault text without code", TypeOutcome, body(u32b(0), u16b(0), strb("x")),
			CodeProtocol, "nodewire: outcome: fault: text without a fault_code"},
		{"presence in-flight+1", TypePresence, body(u32b(1), []byte{4}, u32b(0)),
			CodeProtocol, "nodewire: presence: rows: value 4 of row 0 over 3"},
		{"presence bound over rows", TypePresence, body(u32b(0), u32b(1)),
			CodeProtocol, "nodewire: presence: bound: 1 over 0 rows"},
		{"lent id 0", TypeLent, body(u32b(0), u64b(4096)),
			CodeProtocol, "nodewire: lent: lend: 0, want a lend id"},
		{"lent stride 0", TypeLent, body(u32b(1), u64b(0)),
			CodeProtocol, "nodewire: lent: region_stride: 0, want a positive multiple of 4096"},
		{"cancel attempt 0", TypeCancel, u64b(0),
			CodeProtocol, "nodewire: cancel: attempt: 0, want a request id"},
		{"refused code 0", TypeRefused, body(u16b(0), strb(""), strb("")),
			CodeProtocol, "nodewire: refused: code: 0, want a code"},
		{"node goodbye cut", TypeNodeGoodbye, body(u16b(1), strb("r"), u64b(0)),
			CodeProtocol, "nodewire: node-goodbye: held_lends: truncated: 4 bytes wanted at offset 13, 0 left"},
		{"stats reply one counter short", TypeStatsReply, make([]byte, 8*(statsCounters-1)),
			CodeProtocol, "nodewire: stats-reply: counter 21: truncated: 8 bytes wanted at offset 168, 0 left"},
		{"quiesced with a body", TypeQuiesced, []byte{0},
			CodeProtocol, "nodewire: quiesced: 1 bytes left over after the last field"},
		{"unknown type", Type(0x3f), nil,
			CodeProtocol, "nodewire: header: type: unknown type 0x003f"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m, err := Decode(Header{Type: tt.typ, Len: uint32(len(tt.body)), Request: 1}, tt.body)
			assert.Nil(t, m)
			assert.EqualError(t, err, tt.error)
			assert.Equal(t, tt.code, CodeOf(err))
			assert.ErrorIs(t, err, tt.code.Err())
		})
	}
}

// TestParseHeaderBad: each bad header is refused naming the header's
// field; the header is still returned for the report.
func TestParseHeaderBad(t *testing.T) {
	tests := []struct {
		name  string
		h     Header
		error string
	}{
		{"flags", Header{Type: TypeStats, Flags: 0x8000, Request: 1}, "nodewire: header: flags: 0x8000 set, none defined"},
		{"type zero", Header{Type: 0, Request: 1}, "nodewire: header: type: unknown type 0x0000"},
		{"request zero", Header{Type: TypePublish, Request: 0}, "nodewire: header: request: 0 on a publish, want non-zero"},
		{"goodbye with request", Header{Type: TypeNodeGoodbye, Request: 3}, "nodewire: header: request: 3 on a node-goodbye, want 0"},
		{"over max", Header{Type: TypeLookup, Request: 1, Len: 1025}, "nodewire: header: body_len: 1025 bytes over the limit of 1024"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h, err := ParseHeader(tt.h.Append(nil), 1024)
			assert.Equal(t, tt.h, h)
			assert.EqualError(t, err, tt.error)
		})
	}
	_, err := ParseHeader(make([]byte, 15), 1024)
	assert.EqualError(t, err, "nodewire: header: 15 bytes, want 16")
	h, err := ParseHeader(Header{Type: TypeLookup, Request: 1, Len: 1024}.Append(nil), 1024)
	require.NoError(t, err, "a body of exactly the maximum is allowed")
	assert.Equal(t, uint32(1024), h.Len)
}

// TestEncodeNeverFails: what Go values the wire cannot carry are made to
// fit, so that every frame sent decodes.
func TestEncodeNeverFails(t *testing.T) {
	long := strings.Repeat("a", 65534) + "€" // 65,537 bytes: the euro sign's 3 bytes cross the cut
	tests := []struct {
		name string
		in   Message
		want Message
	}{
		{"invalid UTF-8 becomes U+FFFD", &ClientGoodbye{Reason: "bad \xff byte"}, &ClientGoodbye{Reason: "bad \uFFFD byte"}},
		{"a long str is cut at a rune boundary", &Refused{Code: CodeStore, Message: long}, &Refused{Code: CodeStore, Message: long[:65534]}},
		{"a negative deadline is already due", &Transfer{Dir: contract.GetDir, Lend: 1, Deadline: -time.Second},
			&Transfer{Dir: contract.GetDir, Lend: 1, Deadline: time.Nanosecond}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			frame, err := AppendFrame(nil, 1, tt.in)
			require.NoError(t, err)
			_, m, err := DecodeFrame(frame, 1<<20)
			require.NoError(t, err)
			assert.Equal(t, tt.want, m)
		})
	}
}

// TestAppendFrameAppends: a frame appends after what dst holds, with
// its own length.
func TestAppendFrameAppends(t *testing.T) {
	dst := []byte("prefix")
	dst, err := AppendFrame(dst, 5, &Return{Lend: 3})
	require.NoError(t, err)
	dst, err = AppendFrame(dst, 6, &Held{Bytes: 1})
	require.NoError(t, err)
	assert.Equal(t, "prefix", string(dst[:6]))
	_, m, err := DecodeFrame(dst[6:6+HeaderSize+4], 1<<10)
	require.NoError(t, err)
	assert.Equal(t, &Return{Lend: 3}, m)
	h, m, err := DecodeFrame(dst[6+HeaderSize+4:], 1<<10)
	require.NoError(t, err)
	assert.Equal(t, uint64(6), h.Request)
	assert.Equal(t, &Held{Bytes: 1}, m)
}
