package mooncakedrv

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"unsafe"

	"github.com/stretchr/testify/require"

	"github.com/kvshare/kvshare/mooncakesdk"
	"github.com/kvshare/kvshare/patience"
)

// The other writer: this test binary run again with writerEnv set to a
// store config, writerKeyEnv to a key and writerBytesEnv to a size. It
// opens a client, maps and registers a buffer of that size filled with
// writerByte, prints "putting" and puts the buffer under the key, then
// prints "answer <code>", destroys the client and exits 0 (1 on any
// failure, saying why on stderr). Its put is one a test can hold in
// flight at will: it freezes the process (SIGSTOP) mid-transfer.
const (
	writerEnv      = "KVSHARE_REALPOOL_WRITER"
	writerKeyEnv   = "KVSHARE_REALPOOL_WRITER_KEY"
	writerBytesEnv = "KVSHARE_REALPOOL_WRITER_BYTES"
	writerByte     = 0xA5
)

// runWriter is the other writer's main; it returns the exit code.
func runWriter() int {
	fail := func(format string, args ...any) int {
		fmt.Fprintf(os.Stderr, "writer: "+format+"\n", args...)
		return 1
	}
	var size int
	if _, err := fmt.Sscan(os.Getenv(writerBytesEnv), &size); err != nil || size <= 0 {
		return fail("%s=%q: want a size in bytes", writerBytesEnv, os.Getenv(writerBytesEnv))
	}
	key := os.Getenv(writerKeyEnv)
	cfg, err := mooncakesdk.LoadStoreConfig(os.Getenv(writerEnv))
	if err != nil {
		return fail("%v", err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), realWait)
	defer cancel()
	c, err := mooncakesdk.Open(ctx, cfg, nil)
	if err != nil {
		return fail("%v", err)
	}
	buf, err := syscall.Mmap(-1, 0, size, syscall.PROT_READ|syscall.PROT_WRITE, syscall.MAP_ANON|syscall.MAP_PRIVATE)
	if err != nil {
		return fail("mmap: %v", err)
	}
	buf[0] = writerByte
	for n := 1; n < size; n *= 2 {
		copy(buf[n:], buf[:n])
	}
	addr := uintptr(unsafe.Pointer(&buf[0]))
	if err := c.RegisterBuffer(addr, uint64(size)); err != nil {
		return fail("register: %v", err)
	}
	fmt.Println("putting")
	res := make([]int64, 1)
	if err := c.BatchPutFrom([]string{key}, []uintptr{addr}, []uint64{uint64(size)}, res); err != nil {
		return fail("put: %v", err)
	}
	fmt.Printf("answer %d\n", res[0])
	if err := c.Destroy(); err != nil {
		return fail("destroy: %v", err)
	}
	return 0
}

// otherWriterProcess is a running other writer.
type otherWriterProcess struct {
	cmd    *exec.Cmd
	lines  chan string // its stdout, line by line; closed at EOF
	exited chan struct{}
	err    error // of Wait, once exited is closed
}

// startOtherWriter starts the other writer of key (size bytes) against
// s and waits, within realWait, until it says it is putting. The process
// is killed (SIGKILL, after SIGCONT) when the test ends if still running.
func startOtherWriter(t *testing.T, s *realStore, key string, size int) *otherWriterProcess {
	t.Helper()
	exe, err := os.Executable()
	require.NoError(t, err)
	cmd := exec.Command(exe, "-test.run=^$")
	cmd.Env = append(os.Environ(), writerEnv+"="+s.config, writerKeyEnv+"="+key, fmt.Sprintf("%s=%d", writerBytesEnv, size))
	stderr := new(bytes.Buffer) // read once the process was waited for
	cmd.Stderr = stderr
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	stdout, err := cmd.StdoutPipe()
	require.NoError(t, err)
	require.NoError(t, cmd.Start())
	w := &otherWriterProcess{cmd: cmd, lines: make(chan string, 4), exited: make(chan struct{})}
	go w.read(stdout)
	t.Cleanup(func() {
		select {
		case <-w.exited:
		default:
			_ = cmd.Process.Signal(syscall.SIGCONT)
			_ = cmd.Process.Kill()
			<-w.exited
		}
		if t.Failed() {
			t.Logf("the other writer's output (%v):\n%s", w.err, stderr)
		}
	})
	line, err := w.next(bound(t, realWait, "the other writer saying it is putting"))
	require.NoError(t, err)
	require.Equal(t, "putting", line)
	return w
}

func (w *otherWriterProcess) read(stdout io.Reader) {
	sc := bufio.NewScanner(stdout)
	for sc.Scan() {
		w.lines <- sc.Text()
	}
	close(w.lines)
	w.err = w.cmd.Wait()
	close(w.exited)
}

// next returns the writer's next line of output, waiting within b.
func (w *otherWriterProcess) next(b patience.Bound) (string, error) {
	ctx, cancel := b.Context(context.Background())
	defer cancel()
	select {
	case line, ok := <-w.lines:
		if !ok {
			<-w.exited
			return "", fmt.Errorf("the other writer exited (%v) without a line", w.err)
		}
		return strings.TrimSpace(line), nil
	case <-ctx.Done():
		return "", errors.New("the other writer said nothing within the bound")
	}
}

// signal sends sig to the writer.
func (w *otherWriterProcess) signal(sig syscall.Signal) error { return w.cmd.Process.Signal(sig) }
