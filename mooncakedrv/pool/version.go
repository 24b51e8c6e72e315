package pool

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"
)

// versionTimeout bounds `mooncake_master --version`.
const versionTimeout = 30 * time.Second

// Version returns what `bin/mooncake_master --version` prints in dir, for
// example "mooncake_master version 0.3.12.post1 (git: unknown)". The C
// ABI has no version call; this is the build's only version string.
func Version(ctx context.Context, dir string) (string, error) {
	ctx, cancel := context.WithTimeout(ctx, versionTimeout)
	defer cancel()
	out, err := exec.CommandContext(ctx, filepath.Join(dir, MasterBinary), "--version").CombinedOutput()
	text := strings.TrimSpace(string(out))
	if err != nil {
		return "", fmt.Errorf("pool: %s --version: %w: %s", filepath.Join(dir, MasterBinary), err, text)
	}
	return text, nil
}

// LibrarySHA256 returns the hex SHA-256 of lib/libmooncake_store.so in
// dir: the value of the store config's sdk_sha256 pin.
func LibrarySHA256(dir string) (string, error) {
	f, err := os.Open(filepath.Join(dir, Library))
	if err != nil {
		return "", fmt.Errorf("pool: %w", err)
	}
	defer f.Close()
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		return "", fmt.Errorf("pool: reading %s: %w", f.Name(), err)
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}
