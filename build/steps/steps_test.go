package steps

import (
	"errors"
	"fmt"
	"io"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func say(text string, err error) func(io.Writer) error {
	return func(w io.Writer) error {
		fmt.Fprint(w, text)
		return err
	}
}

func TestAPassingRunIsOneLineAStep(t *testing.T) {
	var out strings.Builder
	require.NoError(t, Run("ci", []Step{{"lint", say("pages of vet output\n", nil)}, {"test", say("ok x\nok y\n", nil)}}, &out, false))
	lines := strings.Split(strings.TrimSuffix(out.String(), "\n"), "\n")
	require.Len(t, lines, 2, out.String())
	assert.Regexp(t, regexp.MustCompile(`^ci: lint passed in \d+ s$`), lines[0])
	assert.Regexp(t, regexp.MustCompile(`^ci: test passed in \d+ s$`), lines[1])
}

func TestAFailedStepShowsItsWholeOutputAndEndsTheRun(t *testing.T) {
	var out strings.Builder
	boom := errors.New("exit status 1")
	ran := false
	err := Run("ci", []Step{
		{"lint", say("quiet\n", nil)},
		{"test", say("--- FAIL: TestX\n    x_test.go:3: no", boom)},
		{"soak", func(io.Writer) error { ran = true; return nil }},
	}, &out, false)
	require.ErrorIs(t, err, boom)
	assert.Contains(t, err.Error(), "ci: test")
	assert.False(t, ran, "no step runs after a failed one")
	assert.NotContains(t, out.String(), "quiet", "a passed step's output is not shown")
	assert.Regexp(t, regexp.MustCompile(`(?m)^ci: test FAILED in \d+ s: exit status 1$`), out.String())
	assert.Contains(t, out.String(), "ci: the output of test:\n--- FAIL: TestX\n    x_test.go:3: no\n")
}

func TestVerboseShowsEveryStepsOutput(t *testing.T) {
	var out strings.Builder
	require.NoError(t, Run("ci", []Step{{"lint", say("vet says\n", nil)}}, &out, true))
	assert.True(t, strings.HasPrefix(out.String(), "vet says\nci: lint passed in "), out.String())
}
