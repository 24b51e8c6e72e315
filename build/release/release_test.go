package release

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestPlanRefuses(t *testing.T) {
	root := gitRepo(t, fixtureFiles())
	for v, want := range map[string]string{"0.4.0": "not semver", "v0.4": "not canonical", "v2.0.0": "major version v2"} {
		_, err := Plan(root, fixture, v)
		assert.ErrorContains(t, err, want, v)
	}

	_, err := Plan(writeFiles(t, fixtureFiles()), fixture, "v0.4.0")
	assert.ErrorContains(t, err, "not the top of a git work tree")

	write(t, root, "untracked.txt", "x")
	_, err = Plan(root, fixture, "v0.4.0")
	require.ErrorIs(t, err, ErrDirty)
	assert.ErrorContains(t, err, "untracked.txt")
	require.NoError(t, os.Remove(filepath.Join(root, "untracked.txt")))

	run(t, root, "git", "tag", "sub/b/v0.4.0")
	_, err = Plan(root, fixture, "v0.4.0")
	assert.ErrorContains(t, err, "tags sub/b/v0.4.0 exist")
}

func TestADryRunPrintsThePlanAndChangesNothing(t *testing.T) {
	root := gitRepo(t, fixtureFiles())
	p, err := Plan(root, fixture, "v0.4.0")
	require.NoError(t, err)
	assert.Equal(t, []string{"v0.4.0", "a/v0.4.0", "sub/b/v0.4.0"}, p.Tags)
	assert.Equal(t, []string{".", "a", "sub/b"}, p.Tidy)
	require.Len(t, p.Edits, 2)
	assert.Equal(t, "sub/b/go.mod", p.Edits[0].File)
	assert.Equal(t, []string{aPath + " v0.3.0"}, p.Edits[0].From)
	assert.Equal(t, "examples/c/go.mod", p.Edits[1].File)

	var out strings.Builder
	p.Print(&out)
	for _, line := range []string{
		"release v0.4.0",
		"  sub/b/go.mod: require " + aPath + " v0.3.0 -> v0.4.0",
		"  examples/c/go.mod: require " + bPath + " v0.3.0 -> v0.4.0",
		"  go mod tidy in sub/b",
		"  tag sub/b/v0.4.0",
		"  push (the releaser's step): git push origin v0.4.0 a/v0.4.0 sub/b/v0.4.0",
	} {
		assert.Contains(t, out.String(), line+"\n")
	}
	assert.Empty(t, run(t, root, "git", "status", "--porcelain"))
	assert.Empty(t, run(t, root, "git", "tag"))
}

func TestApplyCommitsAndTags(t *testing.T) {
	root := gitRepo(t, fixtureFiles())
	p, err := Plan(root, fixture, "v0.4.0")
	require.NoError(t, err)
	var out strings.Builder
	require.NoError(t, p.Apply(root, &out))
	assert.Contains(t, out.String(), "release: tagged sub/b/v0.4.0")

	assert.Empty(t, run(t, root, "git", "status", "--porcelain"), "everything the release changed is committed")
	assert.Equal(t, "release v0.4.0\n", run(t, root, "git", "log", "-1", "--format=%s"))
	tags := strings.Fields(run(t, root, "git", "tag", "--points-at", "HEAD"))
	assert.ElementsMatch(t, []string{"v0.4.0", "a/v0.4.0", "sub/b/v0.4.0"}, tags)
	for _, f := range []string{"sub/b/go.mod", "examples/c/go.mod"} {
		data, err := os.ReadFile(filepath.Join(root, f))
		require.NoError(t, err)
		assert.Contains(t, string(data), " v0.4.0", f)
		assert.NotContains(t, string(data), " v0.3.0", f)
	}

	// Released twice: refused.
	_, err = Plan(root, fixture, "v0.4.0")
	assert.ErrorContains(t, err, "is released already")
}

// A release whose go.mod files already name its version tags HEAD.
func TestApplyWithNothingToChangeTagsHead(t *testing.T) {
	root := gitRepo(t, fixtureFiles())
	head := run(t, root, "git", "rev-parse", "HEAD")
	p, err := Plan(root, fixture, "v0.3.0")
	require.NoError(t, err)
	assert.Empty(t, p.Edits)
	var out strings.Builder
	require.NoError(t, p.Apply(root, &out))
	assert.Contains(t, out.String(), "nothing changed; the tags go on HEAD")
	assert.Equal(t, head, run(t, root, "git", "rev-parse", "HEAD"))
	assert.Equal(t, strings.TrimSpace(head), strings.TrimSpace(run(t, root, "git", "rev-list", "-n1", "a/v0.3.0")))
}
