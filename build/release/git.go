package release

import (
	"bytes"
	"fmt"
	"os/exec"
	"strings"
)

// git runs git in dir and returns its standard output; a failure carries
// what git printed.
func git(dir string, args ...string) (string, error) {
	var stdout, stderr bytes.Buffer
	cmd := exec.Command("git", args...)
	cmd.Dir = dir
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		return "", fmt.Errorf("git %s: %w: %s", strings.Join(args, " "), err, strings.TrimSpace(stderr.String()))
	}
	return stdout.String(), nil
}

// isWorkTree reports whether root is the top of a git work tree.
func isWorkTree(root string) bool {
	out, err := git(root, "rev-parse", "--show-prefix")
	return err == nil && strings.TrimSpace(out) == ""
}

// dirty lists the work tree's changes, untracked files included (ignored
// ones aside); empty means clean.
func dirty(root string, untracked bool) ([]string, error) {
	args := []string{"status", "--porcelain"}
	if !untracked {
		args = append(args, "--untracked-files=no")
	}
	out, err := git(root, args...)
	if err != nil {
		return nil, err
	}
	var lines []string
	for _, l := range strings.Split(out, "\n") {
		if strings.TrimSpace(l) != "" {
			lines = append(lines, l)
		}
	}
	return lines, nil
}

// tagExists reports whether the repository has tag.
func tagExists(root, tag string) bool {
	_, err := git(root, "rev-parse", "-q", "--verify", "refs/tags/"+tag)
	return err == nil
}
