package main

import (
	"bufio"
	"context"
	"crypto/sha256"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"math/rand/v2"
	"strconv"
	"strings"

	"github.com/kvshare/kvshare/binding"
	"github.com/kvshare/kvshare/contract"
	"github.com/kvshare/kvshare/diskdrv"
	"github.com/kvshare/kvshare/memdrv"
)

// diskWriterCommand is the hidden subcommand the writer of
// `kvshare soak --store disk.toml --kill-every D` runs: the kvshare
// binary started again, killed with SIGKILL while it puts rows.
const diskWriterCommand = "soak-disk-writer"

// soakViewRows is the rows of each view the writer publishes, one view
// at a time.
const soakViewRows = 8

// soakRowBytes are the sizes of the writer's rows, one a view in turn:
// whole pages (direct I/O where the file system takes it) and not (the
// page cache).
var soakRowBytes = []int64{64 << 10, 12345}

// soakName is the name of row i of a writer's round: the round, the
// row's number and its size, so that the soak knows each row's bytes
// from its name alone.
func soakName(round, i int) string {
	return fmt.Sprintf("%d/%d/%d", round, i, soakRowBytes[(i/soakViewRows)%len(soakRowBytes)])
}

// soakBytes are the bytes the writer puts under name: as many as the
// name says, drawn from a generator seeded with the name's digest.
func soakBytes(name string, dst []byte) []byte {
	parts := strings.Split(name, "/")
	n, _ := strconv.Atoi(parts[len(parts)-1])
	dst = dst[:n]
	_, _ = rand.NewChaCha8(sha256.Sum256([]byte(name))).Read(dst)
	return dst
}

// writerHold is the writer's hold on its memory: never released, the
// process dies holding it.
type writerHold struct{}

func (writerHold) Release() {}

// diskWriterCmd opens the disk tier of --store (no capacity limit: the
// soak checks crashes, not room) and publishes views of soakViewRows
// rows under --prefix through a backend over a diskdrv driver, one
// view at a time and for ever, each row's bytes derived from its name.
// It prints "open" once the store is open, then "ready NAME" for each
// row delivered, as soon as its view's outcome is known.
func diskWriterCmd(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("kvshare "+diskWriterCommand, flag.ContinueOnError)
	fs.SetOutput(stderr)
	store := fs.String("store", "", "the disk tier's store file")
	prefix := fs.String("prefix", "", "the key prefix of the soak's rows")
	round := fs.Int("round", 0, "the round (the writer's number)")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	if *store == "" || *prefix == "" || fs.NArg() > 0 {
		fmt.Fprintf(stderr, "kvshare %s: --store FILE and --prefix P are required, and no argument\n", diskWriterCommand)
		return 2
	}
	if err := writeRows(ctx, *store, *prefix, *round, stdout, stderr); err != nil {
		fmt.Fprintf(stderr, "kvshare %s: %v\n", diskWriterCommand, err)
		return 1
	}
	return 0
}

// writeRows is the writer's work until ctx ends or a write fails.
func writeRows(ctx context.Context, path, prefix string, round int, stdout, stderr io.Writer) error {
	logger := slog.New(slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
	sf, err := diskdrv.LoadStoreFile(path)
	if err != nil {
		return err
	}
	o := sf.Options(logger)
	o.Capacity, o.Evict = 0, false
	s, err := diskdrv.Open(sf.Disk.Dir, o)
	if err != nil {
		return err
	}
	regions := make([]contract.SlotRegion, len(soakRowBytes))
	mems := make([]*memdrv.Memory, len(soakRowBytes))
	for i, n := range soakRowBytes {
		if mems[i], err = memdrv.Alloc(n, soakViewRows, contract.Host); err != nil {
			return err
		}
		regions[i] = mems[i].Region
	}
	bound, err := binding.Bind(diskdrv.New(s, sf.DriverOptions(logger)), regions, writerHold{})
	if err != nil {
		return err
	}
	backend, err := binding.New(bound, binding.Config{KeyPrefix: prefix, Logger: logger})
	if err != nil {
		return err
	}
	out := bufio.NewWriter(stdout)
	fmt.Fprintln(out, "open")
	if err := out.Flush(); err != nil {
		return err
	}
	for v := 0; ctx.Err() == nil; v++ {
		ri := v % len(soakRowBytes)
		g := contract.Group{Region: ri}
		for j := range soakViewRows {
			name := soakName(round, v*soakViewRows+j)
			rowBytes := soakRowBytes[ri]
			soakBytes(name, mems[ri].Bytes[int64(j)*rowBytes:int64(j+1)*rowBytes])
			g.Slots, g.Names = append(g.Slots, int32(j)), append(g.Names, []byte(name))
		}
		a, err := backend.Publish(contract.View{Groups: []contract.Group{g}}, nil)
		if err != nil {
			return err
		}
		<-a.Done()
		oc, _ := a.Outcome()
		for j, d := range oc.Delivered {
			if d {
				fmt.Fprintf(out, "ready %s\n", g.Names[j])
			}
		}
		if err := out.Flush(); err != nil {
			return err
		}
	}
	return ctx.Err()
}
