package tier

import (
	"errors"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/kvshare/kvshare/build/modules"
)

const stream = `{"Action":"run","Test":"TestA"}
{"Action":"output","Test":"TestA","Output":"=== RUN   TestA\n"}
{"Action":"pass","Test":"TestA"}
{"Action":"run","Test":"TestB"}
{"Action":"output","Test":"TestB","Output":"=== RUN   TestB\n"}
{"Action":"output","Test":"TestB","Output":"    b_test.go:9: the provider died early\n"}
{"Action":"fail","Test":"TestB"}
{"Action":"run","Test":"TestC"}
{"Action":"output","Test":"TestC","Output":"=== RUN   TestC\n"}
{"Action":"output","Test":"TestC","Output":"    c_test.go:3: needs three providers\n"}
{"Action":"output","Test":"TestC","Output":"--- SKIP: TestC (0.00s)\n"}
{"Action":"skip","Test":"TestC"}
{"Action":"output","Output":"FAIL\n"}
{"Action":"fail"}
`

func TestTally(t *testing.T) {
	var shown strings.Builder
	v := Tally(strings.NewReader(stream), "real-pool tier off", &shown)
	assert.Equal(t, Counts{Passed: 1, Failed: 1, Skipped: 1}, v.Counts)
	assert.Equal(t, []string{"TestC: c_test.go:3: needs three providers"}, v.Skips)
	assert.False(t, v.Off)
	assert.Contains(t, shown.String(), "the provider died early", "a failed test's output is shown")
	assert.NotContains(t, shown.String(), "TestA", "a passed test's is not")
	assert.Equal(t, "FAIL\n", v.Unattributed)
	assert.ErrorContains(t, v.judge(nil, &shown), "1 failed")
}

func TestJudge(t *testing.T) {
	var w strings.Builder
	off := Tally(strings.NewReader(`{"Action":"output","Test":"TestA","Output":"real-pool tier off: KVSHARE_MOONCAKE_DIR is not set\n"}
{"Action":"skip","Test":"TestA"}
{"Action":"pass","Test":"TestB"}
`), "real-pool tier off", &w)
	assert.True(t, off.Off)
	assert.ErrorContains(t, off.judge(nil, &w), "skipped as if the tier were off")

	none := Tally(strings.NewReader(`{"Action":"output","Output":"testing: warning: no tests to run\n"}
`), "x", &w)
	assert.ErrorContains(t, none.judge(nil, &w), "ran no test")

	panicked := Tally(strings.NewReader(`{"Action":"pass","Test":"TestA"}
{"Action":"output","Output":"panic: boom\n"}
`), "x", &w)
	w.Reset()
	assert.ErrorContains(t, panicked.judge(errors.New("exit status 2"), &w), "exit: exit status 2")
	assert.Equal(t, "panic: boom\n", w.String(), "output no test owns is shown when the binary failed without a failed test")

	good := Tally(strings.NewReader(`{"Action":"pass","Test":"TestA"}`), "x", &w)
	assert.NoError(t, good.judge(nil, &w))
}

func TestSkipReason(t *testing.T) {
	assert.Equal(t, "why", skipReason("=== RUN   TestX\n   why\n--- SKIP: TestX\n"))
	assert.Equal(t, "(no reason given)", skipReason("=== RUN   TestX\n--- SKIP: TestX\n"))
}

func TestRealpoolIsOffWithoutItsVariable(t *testing.T) {
	var w strings.Builder
	err := Realpool("../..", modules.Repo, func(string) string { return "" }, &w)
	assert.NoError(t, err)
	assert.Equal(t, "realpool: off (KVSHARE_MOONCAKE_DIR is not set; set it to the absolute path of a Mooncake folder to run the real-pool tier)\n", w.String())
	err = Realpool("../..", modules.Repo, func(k string) string {
		if k == EnvMooncakeDir {
			return "relative/mooncake"
		}
		return ""
	}, &w)
	assert.ErrorContains(t, err, `KVSHARE_MOONCAKE_DIR="relative/mooncake" is not an absolute path`)
}

func TestCudaIsOffUnlessAsked(t *testing.T) {
	var w strings.Builder
	assert.NoError(t, Cuda("../..", func(string) string { return "" }, &w))
	assert.Contains(t, w.String(), "cuda: off (KVSHARE_CUDA is not 1")
	err := Cuda("../..", func(k string) string {
		if k == EnvCuda {
			return "yes"
		}
		return ""
	}, &w)
	assert.ErrorContains(t, err, `KVSHARE_CUDA="yes": want 1 (on) or unset`)
	assert.Contains(t, string(cudaScript), "KVSHARE_CUDA=1 exec ./gpuroundtrip.test")
}
