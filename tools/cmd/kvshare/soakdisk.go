package main

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/kvshare/kvshare/diskdrv"
	"github.com/kvshare/kvshare/keys"
	"github.com/kvshare/kvshare/tools/internal/runprefix"
)

// diskKills is what a soak that kills the disk tier's writer found.
// Torn, Lost and Stray must be zero.
type diskKills struct {
	Rounds  int // writers started, then killed
	Ready   int // puts the writers said Ready before their kill
	Checked int // objects found at the reopens, each read and compared
	// Torn are objects found at a reopen that are not whole: bytes or a
	// length other than their key's.
	Torn int
	// Lost are puts a writer said Ready that were absent at the reopen.
	Lost int
	// Stray are objects at a reopen that no writer of the soak may have
	// written, beyond those there before it began.
	Stray int
	// Dropped are the files the reopens removed: temporary files of the
	// puts a kill cut.
	Dropped int
}

// minKillRounds is the fewest writers a killing soak runs, however
// short its duration: a kill, a reopen, another writer killed.
const minKillRounds = 2

func (k diskKills) failed() bool { return k.Torn+k.Lost+k.Stray > 0 }

func (k diskKills) String() string {
	return fmt.Sprintf("%d writers killed; %d puts said Ready; %d objects checked at the reopens; %d temporary files of cut puts removed at open; torn %d, lost %d, stray %d",
		k.Rounds, k.Ready, k.Checked, k.Dropped, k.Torn, k.Lost, k.Stray)
}

// diskKillSoak is `kvshare soak --store disk.toml --kill-every D`: round
// after round until duration has passed, and at least twice (a kill, a
// reopen, another writer, another kill), a writer process (this binary
// again, diskWriterCommand) puts rows into the disk tier of the store
// file at path and is killed with SIGKILL D after it opened the store
// (at the earliest once it said a put Ready);
// then the directory is opened again (the open removes what cut puts
// left and checks every object's header and length), every object the
// writer may have written is read and compared with the bytes its name
// derives, every put the writer said Ready is checked present, and the
// round's objects are removed. Exit status 1 when an object was torn, a
// Ready put lost or a stray object found, or a writer failed.
func diskKillSoak(ctx context.Context, path string, every, duration time.Duration, stdout, stderr io.Writer) int {
	// The reopens remove the temporary files of cut puts, as expected
	// here, warning of each: the report counts them instead.
	logger := slog.New(slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: slog.LevelError}))
	sf, err := diskdrv.LoadStoreFile(path)
	if err != nil {
		fmt.Fprintln(stderr, "kvshare:", err)
		return 2
	}
	prefix, err := runprefix.New(sf.Blob.KeyPrefix, "soak")
	if err != nil {
		fmt.Fprintln(stderr, "kvshare soak:", err)
		return 2
	}
	stem, err := keys.NewStem(prefix)
	if err != nil {
		fmt.Fprintln(stderr, "kvshare soak:", err)
		return 2
	}
	c := diskChecker{dir: sf.Disk.Dir, o: sf.Options(logger), stem: stem}
	if c.before, err = c.objects(); err != nil {
		fmt.Fprintln(stderr, "kvshare soak:", err)
		return 1
	}
	fmt.Fprintf(stdout, "kvshare soak: a writer process over the disk tier in %s (durability %s, %d objects before), killed with SIGKILL %v after it opens the store, for %v; keys under %s/v1/…\n",
		c.dir, sf.Disk.WithDefaults().Durability, c.before, every, duration, prefix)
	var k diskKills
	for end := time.Now().Add(duration); (k.Rounds < minKillRounds || time.Now().Before(end)) && ctx.Err() == nil; k.Rounds++ {
		ready, err := runDiskWriter(ctx, path, prefix, k.Rounds, every, stderr)
		if err != nil {
			fmt.Fprintln(stdout, "kvshare soak:", k)
			fmt.Fprintf(stderr, "kvshare: soak FAILED: the writer of round %d: %v\n", k.Rounds, err)
			return 1
		}
		k.Ready += len(ready)
		if err := c.check(k.Rounds, ready, &k); err != nil {
			fmt.Fprintln(stdout, "kvshare soak:", k)
			fmt.Fprintf(stderr, "kvshare: soak FAILED: checking round %d: %v\n", k.Rounds, err)
			return 1
		}
	}
	fmt.Fprintln(stdout, "kvshare soak:", k)
	if k.failed() {
		fmt.Fprintln(stderr, "kvshare: soak FAILED: a killed writer left an object torn, a Ready put lost or a stray object")
		return 1
	}
	return 0
}

// runDiskWriter starts the writer of round, kills it (SIGKILL) every
// after it said the store is open, at the earliest once it said a put
// Ready, and returns the names it said Ready before it died (read to
// the end of its output).
func runDiskWriter(ctx context.Context, path, prefix string, round int, every time.Duration, stderr io.Writer) ([]string, error) {
	self, err := os.Executable()
	if err != nil {
		return nil, err
	}
	cmd := exec.CommandContext(ctx, self, diskWriterCommand, "--store", path, "--prefix", prefix, "--round", strconv.Itoa(round))
	cmd.Stderr = &prefixed{w: stderr, prefix: "writer: "}
	out, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	lines := make(chan string)
	go func() {
		defer close(lines)
		sc := bufio.NewScanner(out)
		for sc.Scan() {
			lines <- sc.Text()
		}
	}()
	var ready []string
	var timer <-chan time.Time // armed once the store is open
	due, killed := false, false
	for open := true; open; {
		select {
		case line, ok := <-lines:
			switch {
			case !ok:
				open = false
			case line == "open":
				timer = time.After(every)
			case strings.HasPrefix(line, "ready "):
				ready = append(ready, strings.TrimPrefix(line, "ready "))
			}
		case <-timer:
			due, timer = true, nil
		}
		if due && !killed && len(ready) > 0 {
			// The lines it wrote before it died are still read: the
			// pipe keeps them.
			if err := cmd.Process.Signal(syscall.SIGKILL); err != nil {
				return nil, errors.Join(err, cmd.Wait())
			}
			killed = true
		}
	}
	err = cmd.Wait()
	if !killed {
		return nil, fmt.Errorf("it ended before it was killed: %v", err)
	}
	return ready, nil
}

// diskChecker opens the directory between writers and checks what they
// left.
type diskChecker struct {
	dir    string
	o      diskdrv.Options
	stem   keys.Stem
	before int // objects in the store before the soak
}

// objects opens the store and counts its objects.
func (c *diskChecker) objects() (int, error) {
	s, err := diskdrv.Open(c.dir, c.o)
	if err != nil {
		return 0, err
	}
	_, n := s.Used()
	return n, s.Close()
}

// check opens the store after round's writer died and adds to k what
// it finds: every row the writer may have put (up to two views past
// the last it said Ready: it publishes one view at a time) read whole
// and compared, every Ready put present, no object beyond those; then
// removes the round's objects.
func (c *diskChecker) check(round int, ready []string, k *diskKills) error {
	s, err := diskdrv.Open(c.dir, c.o)
	if err != nil {
		return err
	}
	defer s.Close()
	k.Dropped += s.Dropped()
	said := make(map[string]bool, len(ready))
	last := -1
	for _, name := range ready {
		said[name] = true
		i, _ := strconv.Atoi(strings.Split(name, "/")[1])
		last = max(last, i)
	}
	_, objects := s.Used()
	present := 0
	buf := make([]byte, soakRowBytes[0])
	for i := range (last/soakViewRows + 3) * soakViewRows {
		name := soakName(round, i)
		key, err := c.stem.Key([]byte(name))
		if err != nil {
			return err
		}
		obj, whole := s.Object(key)
		_, statErr := os.Stat(s.Path(key))
		switch {
		case whole:
			present++
			k.Checked++
			if !bytes.Equal(obj, soakBytes(name, buf)) {
				k.Torn++
			}
		case statErr == nil:
			present++
			k.Torn++ // a file the open kept that is no whole object
		case said[name]:
			k.Lost++
		}
		if _, err := s.Remove(key); err != nil {
			return err
		}
	}
	k.Stray += max(0, objects-c.before-present)
	return nil
}
