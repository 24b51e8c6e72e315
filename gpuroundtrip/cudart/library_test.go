package cudart

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestCandidates(t *testing.T) {
	for _, tc := range []struct {
		name   string
		option string
		env    map[string]string
		want   []string
	}{
		{"option wins", "/opt/cuda/libcudart.so.12", map[string]string{EnvLibrary: "/x.so"}, []string{"/opt/cuda/libcudart.so.12"}},
		{"variable next", "", map[string]string{EnvLibrary: "/x.so"}, []string{"/x.so"}},
		{"empty variable is unset", "", map[string]string{EnvLibrary: ""}, DefaultLibraries},
		{"defaults last", "", nil, DefaultLibraries},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := candidates(tc.option, func(k string) (string, bool) { v, ok := tc.env[k]; return v, ok })
			assert.Equal(t, tc.want, got)
		})
	}
	assert.Equal(t, []string{"libcudart.so", "libcudart.so.13", "libcudart.so.12"}, DefaultLibraries)
}

// A library that cannot be loaded is an error naming every file tried,
// in order, and never a panic.
func TestNoLibraryIsAnError(t *testing.T) {
	_, err := loadFrom([]string{"/nonexistent/libcudart.so", "libkvshare-no-such-cudart.so.99"})
	require.ErrorIs(t, err, ErrLibrary)
	assert.Regexp(t, `tried /nonexistent/libcudart.so \(.+\); libkvshare-no-such-cudart.so.99 \(.+\)`, err.Error())
	assert.Contains(t, err.Error(), EnvLibrary)

	t.Setenv(EnvLibrary, "/nonexistent/from-the-variable.so")
	_, err = Open(Options{Logger: quiet})
	require.ErrorIs(t, err, ErrLibrary)
	assert.Contains(t, err.Error(), "/nonexistent/from-the-variable.so")
}

// A library that lacks a function is refused, naming what is missing
// (once, though cudaMemcpy is bound twice), before any symbol is
// registered: an error, never purego's panic.
func TestMissingSymbolIsAnError(t *testing.T) {
	for _, sym := range []string{"cudaHostAlloc", "cudaMemcpy", "cudaGetErrorString"} {
		t.Run(sym, func(t *testing.T) {
			path := buildFake(t, "-DFAKE_OMIT_"+sym)
			r, err := Open(Options{Library: path, Logger: quiet})
			require.ErrorIs(t, err, ErrLibrary)
			assert.Nil(t, r)
			assert.Equal(t, "cudart: CUDA runtime library unusable: "+path+" lacks "+sym, err.Error())
			assert.Empty(t, loadFake(t, path).callLog(), "no CUDA call was made")
		})
	}
}
