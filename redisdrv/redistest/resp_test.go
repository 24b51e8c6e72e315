package redistest

import (
	"bufio"
	"bytes"
	"io"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/kvshare/kvshare/keys"
)

// reader reads text through a small buffer, so lines and payloads cross
// buffer ends.
func reader(text string) *bufio.Reader { return bufio.NewReaderSize(strings.NewReader(text), 16) }

func TestReadReplyReadsEachType(t *testing.T) {
	for _, tc := range []struct {
		name string
		text string
		push bool
	}{
		{"simple string", "+OK\r\n", false},
		{"error", "-ERR wrong type\r\n", false},
		{"integer", ":-42\r\n", false},
		{"bulk", "$5\r\nhello\r\n", false},
		{"bulk with CRLF inside", "$4\r\n\r\n\r\n\r\n", false},
		{"empty bulk", "$0\r\n\r\n", false},
		{"null bulk", "$-1\r\n", false},
		{"null array", "*-1\r\n", false},
		{"empty array", "*0\r\n", false},
		{"array", "*3\r\n:1\r\n$1\r\na\r\n+b\r\n", false},
		{"nested arrays", "*2\r\n*2\r\n:1\r\n*1\r\n:2\r\n*0\r\n", false},
		{"null", "_\r\n", false},
		{"double", ",3.14\r\n", false},
		{"double inf", ",-inf\r\n", false},
		{"double nan", ",nan\r\n", false},
		{"boolean", "#t\r\n", false},
		{"blob error", "!21\r\nSYNTAX invalid syntax\r\n", false},
		{"verbatim", "=15\r\ntxt:Some string\r\n", false},
		{"big number", "(3492890328409238509324850943850943825024385\r\n", false},
		{"map", "%2\r\n+first\r\n:1\r\n+second\r\n*1\r\n:2\r\n", false},
		{"empty map", "%0\r\n", false},
		{"set", "~2\r\n+a\r\n+b\r\n", false},
		{"push", ">3\r\n+invalidate\r\n*1\r\n$1\r\nk\r\n_\r\n", true},
		{"attribute before a value", "|1\r\n+key-popularity\r\n%1\r\n$1\r\na\r\n,0.19\r\n:7\r\n", false},
		{"attribute before a push", "|1\r\n+a\r\n+b\r\n>1\r\n+x\r\n", true},
		{"empty attribute", "|0\r\n+OK\r\n", false},
		{"attribute inside an array", "*2\r\n|1\r\n+a\r\n+b\r\n:1\r\n:2\r\n", false},
		{"push inside an array is no push", "*1\r\n>1\r\n+x\r\n", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			// Twice in a row, then a marker: the reader stops at each end.
			r := reader(tc.text + tc.text + "+next\r\n")
			for range 2 {
				out, push, err := readReply(r, nil)
				require.NoError(t, err)
				assert.Equal(t, tc.text, string(out))
				assert.Equal(t, tc.push, push)
			}
			out, _, err := readReply(r, []byte("kept:"))
			require.NoError(t, err)
			assert.Equal(t, "kept:+next\r\n", string(out), "readReply appends to buf")
			_, _, err = readReply(r, nil)
			require.ErrorIs(t, err, io.EOF)
		})
	}
}

func TestReadReplyRefuses(t *testing.T) {
	for _, tc := range []struct {
		name string
		text string
		want error
	}{
		{"unknown type", "?x\r\n", errProtocol},
		{"empty line", "\r\n", errProtocol},
		{"LF only", "+OK\n", errProtocol},
		{"CR inside a line", "+O\rK\r\n", errProtocol},
		{"bad integer", ":12a\r\n", errProtocol},
		{"bad double", ",pi\r\n", errProtocol},
		{"bad boolean", "#x\r\n", errProtocol},
		{"null with text", "_x\r\n", errProtocol},
		{"bad big number", "(12-3\r\n", errProtocol},
		{"empty big number", "(\r\n", errProtocol},
		{"bad length", "$abc\r\n", errProtocol},
		{"negative length", "$-2\r\n", errProtocol},
		{"null map", "%-1\r\n", errProtocol},
		{"bulk too long", "$536870913\r\n", errProtocol},
		{"payload not ended by CRLF", "$2\r\nabcd\r\n", errProtocol},
		{"streamed string", "$?\r\n;4\r\nHell\r\n;0\r\n", errProtocol},
		{"streamed array", "*?\r\n:1\r\n.\r\n", errProtocol},
		{"line too long", "+" + strings.Repeat("a", maxLine) + "\r\n", errProtocol},
		{"nested too deeply", strings.Repeat("*1\r\n", maxDepth+1) + ":1\r\n", errProtocol},
		{"truncated line", "+OK", io.ErrUnexpectedEOF},
		{"truncated bulk", "$10\r\nabc", io.ErrUnexpectedEOF},
		{"truncated array", "*3\r\n:1\r\n", io.EOF},
		{"attribute without its value", "|1\r\n+a\r\n+b\r\n", io.EOF},
		{"nothing", "", io.EOF},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, _, err := readReply(reader(tc.text), nil)
			require.ErrorIs(t, err, tc.want)
		})
	}
}

func TestReadReplyDoesNotAllocateDeclaredLength(t *testing.T) {
	out, _, err := readReply(reader("$536870911\r\nshort"), nil)
	require.ErrorIs(t, err, io.ErrUnexpectedEOF)
	assert.LessOrEqual(t, cap(out), 2*readChunk, "a short payload grows the buffer by what arrives, a chunk at a time")
}

func TestReadCommand(t *testing.T) {
	for _, tc := range []struct {
		name string
		text string
		want []string
	}{
		{"array", "*3\r\n$3\r\nSET\r\n$1\r\nk\r\n$5\r\nv\r\nxy\r\n", []string{"SET", "k", "v\r\nxy"}},
		{"empty argument", "*2\r\n$4\r\nECHO\r\n$0\r\n\r\n", []string{"ECHO", ""}},
		{"inline", "SET  k\tv\r\n", []string{"SET", "k", "v"}},
		{"inline LF only", "PING\n", []string{"PING"}},
		{"empty array", "*0\r\n", nil},
		{"empty inline", "\r\n", nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			args, err := readCommand(reader(tc.text))
			require.NoError(t, err)
			var got []string
			for _, a := range args {
				got = append(got, string(a))
			}
			assert.Equal(t, tc.want, got)
		})
	}
}

func TestReadCommandRefuses(t *testing.T) {
	for _, tc := range []struct {
		name string
		text string
		want error
	}{
		{"bad count", "*x\r\n", errProtocol},
		{"too many arguments", "*1048577\r\n", errProtocol},
		{"argument not bulk", "*1\r\n:1\r\n", errProtocol},
		{"null argument", "*1\r\n$-1\r\n", errProtocol},
		{"payload not ended by CRLF", "*1\r\n$1\r\nab\r\n", errProtocol},
		{"truncated", "*2\r\n$3\r\nGET\r\n", io.ErrUnexpectedEOF},
		{"inline too long", strings.Repeat("a", maxLine+1), errProtocol},
		{"nothing", "", io.EOF},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := readCommand(reader(tc.text))
			require.ErrorIs(t, err, tc.want)
		})
	}
}

func TestWriteCommandRoundTrips(t *testing.T) {
	args := [][]byte{[]byte("SET"), []byte("k"), {}, []byte("a\r\nb")}
	var b bytes.Buffer
	w := bufio.NewWriter(&b)
	require.NoError(t, writeCommand(w, args))
	require.NoError(t, w.Flush())
	assert.Equal(t, "*4\r\n$3\r\nSET\r\n$1\r\nk\r\n$0\r\n\r\n$4\r\na\r\nb\r\n", b.String())
	got, err := readCommand(bufio.NewReader(&b))
	require.NoError(t, err)
	assert.Equal(t, args, got)
}

func TestKeyArgsAndRecord(t *testing.T) {
	cmd := func(words ...string) [][]byte {
		var c [][]byte
		for _, w := range words {
			c = append(c, []byte(w))
		}
		return c
	}
	for _, tc := range []struct {
		cmd  [][]byte
		want [][]byte
	}{
		{cmd("GET", "k"), cmd("k")},
		{cmd("set", "k", "v", "NX"), cmd("k")},
		{cmd("STRLEN", "k"), cmd("k")},
		{cmd("DEL", "a", "b"), cmd("a", "b")},
		{cmd("exists", "a", "b", "c"), cmd("a", "b", "c")},
		{cmd("MGET", "a", "b"), cmd("a", "b")},
		{cmd("MSET", "a", "1", "b", "2"), cmd("a", "b")},
		{cmd("PING"), nil},
		{nil, nil},
	} {
		assert.Equal(t, tc.want, KeyArgs(tc.cmd), "%q", tc.cmd)
	}
	long := bytes.Repeat([]byte("v"), MatchValueBytes+10)
	longKey := strings.Repeat("k", keys.MaxKeyBytes)
	rec := record([][]byte{[]byte("SET"), []byte(longKey), long, []byte("NX")})
	assert.Len(t, rec[2], MatchValueBytes, "a value is cut")
	assert.Equal(t, longKey, string(rec[1]), "a key is kept whole")
	assert.Equal(t, "NX", string(rec[3]))
	assert.True(t, Command("set", longKey)(rec))
	assert.False(t, Command("GET", longKey)(rec))
	assert.False(t, Command("SET", "v")(rec))
	rec = record([][]byte{[]byte("mset"), []byte(longKey), long, []byte(longKey + "2"), long})
	assert.Equal(t, [][]byte{[]byte(longKey), []byte(longKey + "2")}, KeyArgs(rec))
	assert.Len(t, rec[4], MatchValueBytes)
}
