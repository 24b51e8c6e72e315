// Package busy keeps a machine busy, so that the tests can be run the
// way a shared CI runner runs them: beside other work competing for the
// same cores. A Load is N child processes, each a shell spinning on a
// CPU, until Stop or until the process that started them dies
// (Pdeathsig).
//
//	KVSHARE_BUSY=8 go run mage.go test
//
// mage.go starts the load for the whole run when KVSHARE_BUSY is set.
package busy

import (
	"fmt"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
)

// Env names the variable that asks for a load: the number of busy
// processes, 0 or unset for none.
const Env = "KVSHARE_BUSY"

// MaxProcesses is the most busy processes a Load starts.
const MaxProcesses = 256

// spin is the program of one busy process: a POSIX shell loop that never
// sleeps and never exits by itself.
var spin = []string{"/bin/sh", "-c", "while :; do :; done"}

// A Load is the busy processes Start started.
type Load struct {
	cmds []*exec.Cmd
}

// Parse reads a value of KVSHARE_BUSY: empty is 0; otherwise a whole
// number from 0 to MaxProcesses.
func Parse(s string) (int, error) {
	s = strings.TrimSpace(s)
	if s == "" {
		return 0, nil
	}
	n, err := strconv.Atoi(s)
	if err != nil || n < 0 || n > MaxProcesses {
		return 0, fmt.Errorf("busy: %s=%q: want a whole number of busy processes from 0 to %d", Env, s, MaxProcesses)
	}
	return n, nil
}

// Start starts n busy processes. On an error none is left running.
func Start(n int) (*Load, error) {
	l := &Load{}
	for range n {
		cmd := exec.Command(spin[0], spin[1:]...)
		cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL, Setpgid: true}
		if err := cmd.Start(); err != nil {
			l.Stop()
			return nil, fmt.Errorf("busy: starting busy process %d of %d: %w", len(l.cmds)+1, n, err)
		}
		l.cmds = append(l.cmds, cmd)
	}
	return l, nil
}

// PIDs returns the busy processes' process IDs.
func (l *Load) PIDs() []int {
	pids := make([]int, len(l.cmds))
	for i, c := range l.cmds {
		pids[i] = c.Process.Pid
	}
	return pids
}

// Stop kills every busy process and waits for each to be gone.
func (l *Load) Stop() {
	if l == nil {
		return
	}
	for _, c := range l.cmds {
		_ = c.Process.Kill()
	}
	for _, c := range l.cmds {
		_ = c.Wait() // killed: the error says so
	}
	l.cmds = nil
}
