package loopback

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The state letter follows the command's closing parenthesis, whatever
// the command holds.
func TestStatState(t *testing.T) {
	for text, want := range map[string]byte{
		"123 (mooncake_master) T 1 2 3": 'T',
		"7 (a) b) (c) S 0":              'S',
		") R":                           'R',
		"1 (x) ":                        0,
		"1 (x)":                         0,
		"1 x S":                         0,
		"":                              0,
	} {
		assert.Equal(t, want, statState([]byte(text)), "%q", text)
	}
}

// Only sockets listening (state 0A) on the port are found, in lines of
// at least ten fields.
func TestListenInodes(t *testing.T) {
	line := func(port int, state, inode string) string {
		return fmt.Sprintf("0: 0100007F:%04X 00000000:0000 %s 00000000:00000000 00:00000000 00000000 0 0 %s\n", port, state, inode)
	}
	table := "  sl  local_address rem_address   st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode\n" +
		line(12345, "0A", "111") + line(12345, "01", "222") + line(12346, "0A", "333") + line(12345, "0A", "444") +
		"0: 0100007F:3039 00000000:0000 0A short\n"
	assert.Equal(t, []string{"111", "444"}, listenInodes([]byte(table), 12345))
	assert.Empty(t, listenInodes([]byte(table), 1))
}

// A log's tail holds its last lines, each cut short; of a log larger
// than tailReadBytes only the end is read.
func TestLogTail(t *testing.T) {
	dir := t.TempDir()
	write := func(name, text string) string {
		path := filepath.Join(dir, name)
		require.NoError(t, os.WriteFile(path, []byte(text), 0o644))
		return path
	}
	var many strings.Builder
	for i := range 20 {
		fmt.Fprintf(&many, "line %d\n", i)
	}
	tail := LogTail(write("many", many.String()))
	assert.True(t, strings.HasPrefix(tail, "  | line 5\n"), tail)
	assert.True(t, strings.HasSuffix(tail, "  | line 19"), tail)
	assert.Equal(t, "  (log empty)", LogTail(write("empty", "")))
	assert.Equal(t, "  | one line", LogTail(write("one", "one line\n")))
	exact := strings.Repeat("x", tailLineBytes)
	assert.Equal(t, "  | "+exact+"\n  | "+exact+" …", LogTail(write("exact", exact+"\n"+exact+"yz\n")))

	// One line longer than tailReadBytes: its start is never read.
	huge := strings.Repeat("a", tailReadBytes) + strings.Repeat("b", tailReadBytes)
	assert.Equal(t, "  | "+strings.Repeat("b", tailLineBytes)+" …", LogTail(write("huge", huge)))
	assert.Contains(t, LogTail(filepath.Join(dir, "absent")), "log unreadable")
}
