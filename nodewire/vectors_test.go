package nodewire

import (
	"bytes"
	"encoding/hex"
	"encoding/json"
	"errors"
	"flag"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/kvshare/kvshare/contract"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

var update = flag.Bool("update", false, "rewrite testdata/vectors.json from the vectors in vectors_test.go")

const (
	vectorsPath    = "testdata/vectors.json"
	vectorsMaxBody = 1 << 16
)

// vectorFile is testdata/vectors.json: every vector's frame as hex, with
// the fields it decodes to or the error it must be refused with.
type vectorFile struct {
	About   []string `json:"about"`
	Version int      `json:"protocol_version"`
	MaxBody uint32   `json:"max_body"`
	Vectors []vector `json:"vectors"`
}

type vector struct {
	Name    string          `json:"name"`
	Type    string          `json:"type,omitempty"`
	Request uint64          `json:"request,omitempty"`
	FD      bool            `json:"fd,omitempty"`
	Fields  json.RawMessage `json:"fields,omitempty"`
	Hex     string          `json:"hex"`
	Error   *vectorError    `json:"error,omitempty"`
}

type vectorError struct {
	Code     Code   `json:"code"`
	CodeName string `json:"code_name"`
	Field    string `json:"field"`
}

// goodVector is a frame that decodes to msg.
type goodVector struct {
	name    string
	request uint64
	msg     Message
}

// badVector is a frame (header and body as bytes) refused with code,
// naming field.
type badVector struct {
	name  string
	frame []byte
	code  Code
	field string
}

func names(ss ...string) [][]byte {
	out := make([][]byte, len(ss))
	for i, s := range ss {
		out[i] = []byte(s)
	}
	return out
}

func goodVectors() []goodVector {
	var statsReply StatsReply
	for i, c := range statsReply.counters() {
		*c = uint64(1000 + i)
	}
	return []goodVector{
		{"hello", 1, &Hello{Version: 1, Engine: "vllm-0"}},
		{"hello-scope-set", 1, &Hello{Version: 2, Engine: "sglang", Scope: "tenant-a"}},
		{"welcome", 1, &Welcome{Version: 1, NodePID: 4242, MaxFrame: 1 << 20, MaxAttempts: 64, MaxRows: 4096, MaxLendBytes: 1 << 34}},
		{"lend", 2, &Lend{SlotBytes: 65536, SlotCount: 16, Regions: 4}},
		{"lent", 2, &Lent{Lend: 1, RegionStride: 1 << 20}},
		{"publish", 3, &Transfer{Dir: contract.PutDir, Lend: 1, Deadline: 250 * time.Millisecond, Groups: []Group{
			{Region: 0, Slots: []uint32{0, 1, 2}, Names: names("blk-a", "blk-b", "c")},
			{Region: 3, Slots: []uint32{7}, Names: names("blk-a")},
		}}},
		{"publish-no-deadline-no-groups", 4, &Transfer{Dir: contract.PutDir, Lend: 9}},
		{"publish-empty-group", 5, &Transfer{Dir: contract.PutDir, Lend: 1, Groups: []Group{{Region: 2}}}},
		{"fetch", 6, &Transfer{Dir: contract.GetDir, Lend: 1, Deadline: time.Second, Groups: []Group{
			{Region: 1, Slots: []uint32{15, 0}, Names: [][]byte{{0x00, 0xff}, {0x80}}},
		}}},
		{"accepted", 3, &Accepted{}},
		{"outcome", 3, &Outcome{Rows: []contract.RowStatus{contract.Ready, contract.Ready, contract.Miss, contract.Declined}}},
		{"outcome-forced", 6, &Outcome{
			Rows:      []contract.RowStatus{contract.Ready, contract.Pending, contract.Cancelled, contract.Fault, contract.NotReady},
			FaultCode: CodeDeadline, Fault: "deadline of 1s passed",
		}},
		{"quiesced", 3, &Quiesced{}},
		{"lookup", 7, &Lookup{Groups: [][][]byte{names("a", "bb"), names("a")}}},
		{"lookup-every", 8, &Lookup{Every: true, Groups: [][][]byte{names("x")}}},
		{"presence", 7, &Presence{Rows: []contract.Presence{contract.Present, contract.Absent, contract.InFlight, contract.Unknown}, Bound: 1}},
		{"cancel", 9, &Cancel{Attempt: 6}},
		{"return", 10, &Return{Lend: 1}},
		{"returned", 10, &Returned{}},
		{"held", 10, &Held{Bytes: 1 << 20}},
		{"stats", 11, &Stats{}},
		{"stats-reply", 11, &statsReply},
		{"client-goodbye", 12, &ClientGoodbye{Reason: "engine exiting"}},
		{"node-goodbye", 0, &NodeGoodbye{Code: CodeShuttingDown, Reason: "node shutting down", HeldBytes: 4096, HeldLends: 1}},
		{"refused", 2, &Refused{Code: CodeBadLend, Field: "lend.fd", Message: "not sealed against shrinking"}},
		{"refused-unknown-code", 2, &Refused{Code: 999, Field: "", Message: "from a later node"}},
		{"hello-scoped", 1, &Hello{Version: 1, Engine: "vllm-0", Scope: "kvscope1;32:meta-llama/Llama-3.1-8B-Instruct,7:0e9e39f,0:,4:fp16,0:,2:16,1:8,3:128,1:0,2:32,1:0,1:1,1:0,1:1,11:sha256-cbor,0:,4:acme,"}},
		{"refused-bad-scope", 1, &Refused{Code: CodeBadScope, Field: "hello.scope.kv_dtype", Message: "keys: invalid scope: kv_dtype: required"}},
		{"refused-tenant-not-allowed", 1, &Refused{Code: CodeTenantNotAllowed, Field: "hello.scope.tenant", Message: `tenant "acme": the peer (uid 1001, gid 1001) may not declare it by the node's configuration`}},
		{"refused-tenant-limit", 2, &Refused{Code: CodeTenantLimit, Field: "tenant.lent_bytes", Message: `tenant "acme": 4096 bytes lent and 4096 more asked, over its limit of 4096`}},
		{"request-id-max", 0xffff_ffff_ffff_ffff, &Return{Lend: 0xffff_ffff}},
		{"utf8-text", 13, &ClientGoodbye{Reason: "arrêt — 停止"}},
	}
}

// rawFrame builds a frame by hand: header fields and body bytes as given.
func rawFrame(t Type, flags uint16, request uint64, body []byte) []byte {
	b := Header{Len: uint32(len(body)), Type: t, Flags: flags, Request: request}.Append(nil)
	return append(b, body...)
}

// body concatenates encoded pieces.
func body(parts ...[]byte) []byte { return bytes.Join(parts, nil) }

func u16b(v uint16) []byte { return appendU16(nil, v) }
func u32b(v uint32) []byte { return appendU32(nil, v) }
func u64b(v uint64) []byte { return appendU64(nil, v) }
func strb(s string) []byte { return appendStr(nil, s) }

// transferHead is a publish body's lend and deadline.
func transferHead(groups uint32) []byte { return body(u32b(1), u64b(0), u32b(groups)) }

func badVectors() []badVector {
	hello := (&Hello{Version: 1, Engine: "e"}).AppendBody(nil)
	lend := (&Lend{SlotBytes: 4096, SlotCount: 1, Regions: 1}).AppendBody(nil)
	return []badVector{
		{"header-truncated", Header{Len: 0, Type: TypeStats, Request: 1}.Append(nil)[:10], CodeProtocol, "header"},
		{"unknown-type", rawFrame(0x42, 0, 1, nil), CodeProtocol, "header: type"},
		{"flags-set", rawFrame(TypeStats, 0x0001, 1, nil), CodeProtocol, "header: flags"},
		{"request-zero", rawFrame(TypeHello, 0, 0, hello), CodeProtocol, "header: request"},
		{"node-goodbye-request-nonzero", rawFrame(TypeNodeGoodbye, 0, 5, (&NodeGoodbye{Code: CodeProtocol}).AppendBody(nil)), CodeProtocol, "header: request"},
		{"oversize", Header{Len: vectorsMaxBody + 1, Type: TypeLookup, Request: 1}.Append(nil), CodeLimitExceeded, "header: body_len"},
		{"body-len-mismatch", append(Header{Len: 16, Type: TypeLend, Request: 1}.Append(nil), lend[:8]...), CodeProtocol, "header: body_len"},
		{"hello-truncated", rawFrame(TypeHello, 0, 1, hello[:len(hello)-1]), CodeProtocol, "hello: scope"},
		{"hello-str-truncated", rawFrame(TypeHello, 0, 1, body(u16b(1), u16b(10), []byte("abc"))), CodeProtocol, "hello: engine"},
		{"hello-engine-empty", rawFrame(TypeHello, 0, 1, body(u16b(1), strb(""), strb(""))), CodeProtocol, "hello: engine"},
		{"hello-engine-too-long", rawFrame(TypeHello, 0, 1, body(u16b(1), strb(strings.Repeat("e", 65)), strb(""))), CodeProtocol, "hello: engine"},
		{"hello-engine-not-utf8", rawFrame(TypeHello, 0, 1, body(u16b(1), u16b(2), []byte{0xc3, 0x28}, strb(""))), CodeProtocol, "hello: engine"},
		{"lend-truncated", rawFrame(TypeLend, 0, 1, lend[:12]), CodeProtocol, "lend: regions"},
		{"lend-trailing-bytes", rawFrame(TypeLend, 0, 1, append(lend, 0)), CodeProtocol, "lend"},
		{"accepted-trailing-byte", rawFrame(TypeAccepted, 0, 1, []byte{0}), CodeProtocol, "accepted"},
		{"lent-zero-id", rawFrame(TypeLent, 0, 1, body(u32b(0), u64b(4096))), CodeProtocol, "lent: lend"},
		{"lent-stride-not-paged", rawFrame(TypeLent, 0, 1, body(u32b(1), u64b(4095))), CodeProtocol, "lent: region_stride"},
		{"publish-deadline-over-int64", rawFrame(TypePublish, 0, 1, body(u32b(1), u64b(1<<63), u32b(0))), CodeProtocol, "publish: deadline_ns"},
		{"publish-groups-count-huge", rawFrame(TypePublish, 0, 1, transferHead(0xffff_ffff)), CodeProtocol, "publish: groups"},
		{"publish-slots-count-huge", rawFrame(TypePublish, 0, 1, body(transferHead(1), u32b(0), u32b(1<<30), u32b(0))), CodeProtocol, "publish: group 0: slots"},
		{"publish-names-decreasing", rawFrame(TypePublish, 0, 1, body(transferHead(1),
			u32b(0), u32b(2), u32b(0), u32b(1), u32b(2), u32b(5), u32b(3), []byte("abcde"))), CodeBadNames, "publish: group 0: names"},
		{"publish-name-empty", rawFrame(TypePublish, 0, 1, body(transferHead(1),
			u32b(0), u32b(2), u32b(0), u32b(1), u32b(2), u32b(3), u32b(3), []byte("abc"))), CodeBadNames, "publish: group 0: names"},
		{"publish-first-name-empty", rawFrame(TypePublish, 0, 1, body(transferHead(1),
			u32b(0), u32b(1), u32b(0), u32b(1), u32b(0))), CodeBadNames, "publish: group 0: names"},
		{"publish-names-count-mismatch", rawFrame(TypePublish, 0, 1, body(transferHead(1),
			u32b(0), u32b(2), u32b(0), u32b(1), appendNames(nil, names("a")))), CodeBadNames, "publish: group 0: names"},
		{"publish-names-blob-truncated", rawFrame(TypePublish, 0, 1, body(transferHead(1),
			u32b(0), u32b(1), u32b(0), u32b(1), u32b(10), []byte("abcde"))), CodeProtocol, "publish: group 0: names"},
		{"fetch-second-group-names-decreasing", rawFrame(TypeFetch, 0, 1, body(transferHead(2),
			u32b(0), u32b(1), u32b(0), appendNames(nil, names("a")),
			u32b(1), u32b(2), u32b(0), u32b(1), u32b(2), u32b(5), u32b(3), []byte("abcde"))), CodeBadNames, "fetch: group 1: names"},
		{"lookup-every-not-bool", rawFrame(TypeLookup, 0, 1, body([]byte{2}, u32b(0))), CodeProtocol, "lookup: every"},
		{"lookup-names-empty", rawFrame(TypeLookup, 0, 1, body([]byte{0}, u32b(1), u32b(1), u32b(0))), CodeBadNames, "lookup: group 0: names"},
		{"outcome-status-unknown", rawFrame(TypeOutcome, 0, 1, body(u32b(2), []byte{1, 7}, u16b(0), strb(""))), CodeProtocol, "outcome: rows"},
		{"outcome-fault-without-code", rawFrame(TypeOutcome, 0, 1, body(u32b(0), u16b(0), strb("boom"))), CodeProtocol, "outcome: fault"},
		{"presence-value-unknown", rawFrame(TypePresence, 0, 1, body(u32b(1), []byte{4}, u32b(0))), CodeProtocol, "presence: rows"},
		{"presence-bound-over-rows", rawFrame(TypePresence, 0, 1, body(u32b(1), []byte{1}, u32b(2))), CodeProtocol, "presence: bound"},
		{"cancel-attempt-zero", rawFrame(TypeCancel, 0, 1, u64b(0)), CodeProtocol, "cancel: attempt"},
		{"stats-reply-truncated", rawFrame(TypeStatsReply, 0, 1, make([]byte, 8*statsCounters-1)), CodeProtocol, "stats-reply: counter 21"},
		{"refused-code-zero", rawFrame(TypeRefused, 0, 1, body(u16b(0), strb("f"), strb("m"))), CodeProtocol, "refused: code"},
		{"node-goodbye-code-zero", rawFrame(TypeNodeGoodbye, 0, 0, body(u16b(0), strb(""), u64b(0), u32b(0))), CodeProtocol, "node-goodbye: code"},
	}
}

// fieldsOf returns a message's fields under their names in PROTOCOL.md:
// numbers, strings, booleans, names as lists of hex strings, arrays of
// u8 as lists of numbers.
func fieldsOf(m Message) map[string]any {
	hexes := func(ns [][]byte) []string {
		out := make([]string, len(ns))
		for i, n := range ns {
			out[i] = hex.EncodeToString(n)
		}
		return out
	}
	ints := func(n int, at func(int) uint8) []int {
		out := make([]int, n)
		for i := range out {
			out[i] = int(at(i))
		}
		return out
	}
	switch m := m.(type) {
	case *Hello:
		return map[string]any{"version": m.Version, "engine": m.Engine, "scope": m.Scope}
	case *Welcome:
		return map[string]any{"version": m.Version, "node_pid": m.NodePID, "max_frame": m.MaxFrame,
			"max_attempts": m.MaxAttempts, "max_rows": m.MaxRows, "max_lend_bytes": m.MaxLendBytes}
	case *Lend:
		return map[string]any{"slot_bytes": m.SlotBytes, "slot_count": m.SlotCount, "regions": m.Regions}
	case *Lent:
		return map[string]any{"lend": m.Lend, "region_stride": m.RegionStride}
	case *Transfer:
		groups := make([]any, len(m.Groups))
		for i, g := range m.Groups {
			slots := g.Slots
			if slots == nil {
				slots = []uint32{}
			}
			groups[i] = map[string]any{"region": g.Region, "slots": slots, "names": hexes(g.Names)}
		}
		return map[string]any{"lend": m.Lend, "deadline_ns": int64(m.Deadline), "groups": groups}
	case *Outcome:
		return map[string]any{"rows": ints(len(m.Rows), func(i int) uint8 { return uint8(m.Rows[i]) }),
			"fault_code": m.FaultCode, "fault": m.Fault}
	case *Lookup:
		groups := make([]any, len(m.Groups))
		for i, g := range m.Groups {
			groups[i] = hexes(g)
		}
		return map[string]any{"every": m.Every, "groups": groups}
	case *Presence:
		return map[string]any{"rows": ints(len(m.Rows), func(i int) uint8 { return uint8(m.Rows[i]) }), "bound": m.Bound}
	case *Cancel:
		return map[string]any{"attempt": m.Attempt}
	case *Return:
		return map[string]any{"lend": m.Lend}
	case *Held:
		return map[string]any{"bytes": m.Bytes}
	case *StatsReply:
		f := make(map[string]any)
		for i, c := range m.counters() {
			f[statsCounterNames[i]] = *c
		}
		return f
	case *ClientGoodbye:
		return map[string]any{"reason": m.Reason}
	case *NodeGoodbye:
		return map[string]any{"code": m.Code, "reason": m.Reason, "held_bytes": m.HeldBytes, "held_lends": m.HeldLends}
	case *Refused:
		return map[string]any{"code": m.Code, "field": m.Field, "message": m.Message}
	case *Accepted, *Quiesced, *Returned, *Stats:
		return map[string]any{}
	}
	panic("fieldsOf: no case for " + m.Type().String())
}

// statsCounterNames are the stats-reply counters' names in PROTOCOL.md,
// in wire order.
var statsCounterNames = [statsCounters]string{"engines", "attempts", "attempts_open",
	"rows_pending", "rows_ready", "rows_miss", "rows_not_ready", "rows_declined", "rows_fault", "rows_cancelled",
	"lookups", "lookup_names", "lookup_present", "lends", "lent_bytes", "held_lends", "held_bytes",
	"refusals", "peers_refused", "disconnects", "reclaims", "bytes_reclaimed"}

// canonicalJSON re-marshals JSON so that two equal values compare equal
// as bytes (keys sorted, numbers as written).
func canonicalJSON(t *testing.T, raw []byte) string {
	t.Helper()
	d := json.NewDecoder(bytes.NewReader(raw))
	d.UseNumber()
	var v any
	require.NoError(t, d.Decode(&v))
	out, err := json.Marshal(v)
	require.NoError(t, err)
	return string(out)
}

// buildVectors encodes the vectors of goodVectors and badVectors.
func buildVectors(t *testing.T) vectorFile {
	t.Helper()
	f := vectorFile{
		About: []string{
			"Test vectors of the kvshare node protocol, version 1 (see PROTOCOL.md). Generated by `go test -run TestVectors -update` in nodewire; do not edit by hand.",
			"Each vector is one whole frame, header and body, as hex. A vector with fields decodes to them, and its fields encode to exactly its hex; fd true means the frame travels with one fd (SCM_RIGHTS), which the hex does not show.",
			"A vector with error must be refused, with a receiver's max_body as given, with that code; field is where the Go decoder reports it (a client may check the code alone).",
			"Field values: integers as numbers; str as strings; names as lists of hex strings; u8 arrays (rows) as lists of numbers; every as a boolean; deadline_ns in nanoseconds.",
		},
		Version: Version,
		MaxBody: vectorsMaxBody,
	}
	for _, g := range goodVectors() {
		frame, err := AppendFrame(nil, g.request, g.msg)
		require.NoError(t, err, g.name)
		fields, err := json.Marshal(fieldsOf(g.msg))
		require.NoError(t, err, g.name)
		f.Vectors = append(f.Vectors, vector{
			Name: g.name, Type: g.msg.Type().String(), Request: g.request, FD: g.msg.Type().CarriesFD(),
			Fields: fields, Hex: hex.EncodeToString(frame),
		})
	}
	for _, b := range badVectors() {
		v := vector{Name: "bad/" + b.name, Hex: hex.EncodeToString(b.frame),
			Error: &vectorError{Code: b.code, CodeName: b.code.String(), Field: b.field}}
		if len(b.frame) >= HeaderSize {
			h, _ := ParseHeader(b.frame, vectorsMaxBody)
			v.Type, v.Request, v.FD = h.Type.String(), h.Request, h.Type.CarriesFD()
		}
		f.Vectors = append(f.Vectors, v)
	}
	return f
}

func readVectors(t *testing.T) vectorFile {
	t.Helper()
	raw, err := os.ReadFile(vectorsPath)
	require.NoError(t, err, "run go test -run TestVectors -update to write it")
	var f vectorFile
	require.NoError(t, json.Unmarshal(raw, &f))
	return f
}

// TestVectors checks testdata/vectors.json both ways: each good vector's
// message encodes to its hex and its hex decodes to its message and
// fields; each bad vector's hex is refused with its code and field. With
// -update it first rewrites the file.
func TestVectors(t *testing.T) {
	want := buildVectors(t)
	if *update {
		out, err := json.MarshalIndent(want, "", "  ")
		require.NoError(t, err)
		require.NoError(t, os.WriteFile(vectorsPath, append(out, '\n'), 0o644))
	}
	got := readVectors(t)
	require.Equal(t, Version, got.Version)
	require.Equal(t, uint32(vectorsMaxBody), got.MaxBody)
	require.Len(t, got.Vectors, len(want.Vectors), "the file's vectors differ from the table: run with -update")

	goods := goodVectors()
	for i, v := range got.Vectors {
		t.Run(v.Name, func(t *testing.T) {
			require.Equal(t, want.Vectors[i].Name, v.Name, "the file's vectors differ from the table: run with -update")
			frame, err := hex.DecodeString(v.Hex)
			require.NoError(t, err)
			h, m, err := DecodeFrame(frame, got.MaxBody)
			if v.Error != nil {
				require.Error(t, err)
				assert.Nil(t, m)
				fe, ok := errors.AsType[*FrameError](err)
				require.True(t, ok, "%v is not a *FrameError", err)
				assert.Equal(t, v.Error.Code, fe.Code, "%v", err)
				assert.Equal(t, v.Error.Code, CodeOf(err))
				assert.ErrorIs(t, err, v.Error.Code.Err())
				assert.Equal(t, v.Error.Field, fe.Field, "%v", err)
				assert.Equal(t, v.Error.Code.String(), v.Error.CodeName)
				return
			}
			require.NoError(t, err)
			g := goods[i]
			// Decoding: the hex gives the table's message and the file's fields.
			assert.Equal(t, g.request, h.Request)
			assert.Equal(t, v.Request, h.Request)
			assert.Equal(t, v.Type, h.Type.String())
			assert.Equal(t, v.FD, h.Type.CarriesFD())
			assert.Equal(t, g.msg, m)
			fields, err := json.Marshal(fieldsOf(m))
			require.NoError(t, err)
			assert.Equal(t, canonicalJSON(t, v.Fields), canonicalJSON(t, fields))
			// Encoding: the table's message gives the hex.
			enc, err := AppendFrame(nil, g.request, g.msg)
			require.NoError(t, err)
			assert.Equal(t, v.Hex, hex.EncodeToString(enc))
		})
	}
}
