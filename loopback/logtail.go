package loopback

import (
	"bytes"
	"io"
	"os"
	"strings"
)

// Tail limits: a server may log a multi-kilobyte line every few seconds.
const (
	tailLines     = 15
	tailLineBytes = 400
	tailReadBytes = 64 << 10
)

// LogTail returns the last lines of the log at path, each cut short and
// indented "  | ", for an error's text.
func LogTail(path string) string {
	f, err := os.Open(path)
	if err != nil {
		return "  (log unreadable: " + err.Error() + ")"
	}
	defer f.Close()
	if info, err := f.Stat(); err == nil {
		_, _ = f.Seek(max(0, info.Size()-tailReadBytes), io.SeekStart) // the last tailReadBytes at most
	}
	data, err := io.ReadAll(f)
	if err != nil {
		return "  (log unreadable: " + err.Error() + ")"
	}
	lines := strings.Split(string(bytes.TrimRight(data, "\n")), "\n")
	lines = lines[max(0, len(lines)-tailLines):]
	if len(lines) == 1 && lines[0] == "" {
		return "  (log empty)"
	}
	for i, l := range lines {
		if len(l) > tailLineBytes {
			l = l[:tailLineBytes] + " …"
		}
		lines[i] = "  | " + l
	}
	return strings.Join(lines, "\n")
}
