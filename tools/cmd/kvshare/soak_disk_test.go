package main

import (
	"bytes"
	"fmt"
	"log/slog"
	"path/filepath"
	"regexp"
	"strconv"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/kvshare/kvshare/contract"
	"github.com/kvshare/kvshare/diskdrv"
	"github.com/kvshare/kvshare/keys"
)

// `kvshare soak --store disk.toml --kill-every D`: writer processes of
// their own, each killed with SIGKILL while it puts rows, and at every
// reopen each object whole or absent and each Ready put present; the
// soak's objects are removed, the store left as found.
func TestSoakKillsTheDiskWriter(t *testing.T) {
	t.Setenv(asKvshare, "1")
	dir := filepath.Join(t.TempDir(), "kv")
	store := writeStore(t, fmt.Sprintf("[blob]\nkey_prefix = \"soaked\"\n[disk]\ndir = %q\ncapacity = 0\ndurability = \"data\"\n", dir))
	var out, errs bytes.Buffer
	code := run([]string{"soak", "--store", store, "--kill-every", "300ms", "--duration", "1s"}, &out, &errs)
	require.Equal(t, 0, code, "stdout:\n%s\nstderr:\n%s", out.String(), errs.String())
	assert.Contains(t, out.String(), "kvshare soak: a writer process over the disk tier in "+dir+" (durability data, 0 objects before), killed with SIGKILL 300ms")
	m := regexp.MustCompile(`(\d+) writers killed; (\d+) puts said Ready; (\d+) objects checked at the reopens; \d+ temporary files of cut puts removed at open; torn 0, lost 0, stray 0\n$`).
		FindStringSubmatch(out.String())
	require.NotNil(t, m, out.String())
	writers, _ := strconv.Atoi(m[1])
	ready, _ := strconv.Atoi(m[2])
	checked, _ := strconv.Atoi(m[3])
	assert.GreaterOrEqual(t, writers, 2, "a kill, a reopen, another writer")
	assert.GreaterOrEqual(t, ready, writers, "each writer killed once it said a put Ready")
	assert.GreaterOrEqual(t, checked, ready, "every Ready put found and read")

	s, err := diskdrv.Open(dir, diskdrv.Options{})
	require.NoError(t, err, "the lock is free")
	defer s.Close()
	_, objects := s.Used()
	assert.Zero(t, objects, "the soak's objects are removed")
}

// The check finds each thing a killed writer must never leave: an
// object whose bytes are not its name's (torn), a put said Ready that
// is absent (lost), an object no writer wrote (stray); and counts the
// whole ones it read.
func TestDiskCheckFindsTornLostAndStray(t *testing.T) {
	dir := t.TempDir()
	stem, err := keys.NewStem("check")
	require.NoError(t, err)
	c := diskChecker{dir: dir, o: diskdrv.Options{Logger: slog.New(slog.DiscardHandler)}, stem: stem}
	s, err := diskdrv.Open(dir, c.o)
	require.NoError(t, err)
	seed := func(name string, data []byte) {
		key, err := stem.Key([]byte(name))
		require.NoError(t, err)
		require.Equal(t, contract.Ready, s.Seed(key, data))
	}
	require.Equal(t, contract.Ready, s.Seed("someone else's", []byte("x")))
	s.Close()
	c.before, err = c.objects()
	require.NoError(t, err)
	require.Equal(t, 1, c.before)

	s, err = diskdrv.Open(dir, c.o)
	require.NoError(t, err)
	buf := make([]byte, soakRowBytes[0])
	whole, torn, lost := soakName(0, 0), soakName(0, 1), soakName(0, 2)
	seed(whole, soakBytes(whole, buf))
	bad := bytes.Clone(soakBytes(torn, buf))
	bad[len(bad)/2] ^= 1
	seed(torn, bad)
	require.Equal(t, contract.Ready, s.Seed("stray", []byte("y")))
	s.Close()

	var k diskKills
	require.NoError(t, c.check(0, []string{whole, torn, lost}, &k))
	assert.Equal(t, diskKills{Checked: 2, Torn: 1, Lost: 1, Stray: 1}, k)
	assert.True(t, k.failed())
	assert.False(t, diskKills{Checked: 3}.failed())

	n, err := c.objects()
	require.NoError(t, err)
	assert.Equal(t, 2, n, "the round's objects removed; others' left")
}
