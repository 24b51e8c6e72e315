package targetargs

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestCarry(t *testing.T) {
	for _, tc := range []struct {
		name string
		args []string
		want []string
		env  map[string]string
	}{
		{"no options", []string{"ci"}, []string{"ci"}, map[string]string{}},
		{"release dry run", []string{"release", "v0.3.0", "--dry-run"}, []string{"release", "v0.3.0"}, map[string]string{DryRun: "1"}},
		{"release dry run first", []string{"-v", "Release", "-dry-run", "v0.3.0"}, []string{"-v", "Release", "v0.3.0"}, map[string]string{DryRun: "1"}},
		{"release alone", []string{"release", "v0.3.0"}, []string{"release", "v0.3.0"}, map[string]string{}},
		{"dist with a version", []string{"dist", "/tmp/p", "v0.4.0"}, []string{"dist", "/tmp/p"}, map[string]string{DistVersion: "v0.4.0"}},
		{"dist without", []string{"dist", "/tmp/p", "ci"}, []string{"dist", "/tmp/p", "ci"}, map[string]string{}},
		{"a target after dist", []string{"dist", "/tmp/p", "v0.4.0", "build"}, []string{"dist", "/tmp/p", "build"}, map[string]string{DistVersion: "v0.4.0"}},
		{"--dry-run elsewhere stays", []string{"ci", "--dry-run"}, []string{"ci", "--dry-run"}, map[string]string{}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			env := map[string]string{}
			got := Carry(tc.args, func(k, v string) { env[k] = v })
			assert.Equal(t, tc.want, got)
			assert.Equal(t, tc.env, env)
		})
	}
}
