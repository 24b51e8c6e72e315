package mooncakesdk

import (
	"bytes"
	"context"
	"crypto/rand"
	"log/slog"
	"net"
	"os"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// openStub builds a stub, opens a client on it and destroys the client
// when the test ends (if the test did not).
func openStub(t *testing.T) (*stubLib, Client) {
	t.Helper()
	s := loadStub(t, buildStub(t, "libmooncake_store.so"))
	c, err := Open(context.Background(), stubConfig(t, s.path), slog.New(slog.DiscardHandler))
	require.NoError(t, err)
	t.Cleanup(func() { _ = c.Destroy() })
	return s, c
}

func TestOpenSetsUpWithTheConfigOnOneThread(t *testing.T) {
	s := loadStub(t, buildStub(t, "libmooncake_store.so"))
	cfg := stubConfig(t, s.path)
	var logs bytes.Buffer
	c, err := Open(context.Background(), cfg, slog.New(slog.NewTextHandler(&logs, nil)))
	require.NoError(t, err)

	assert.Equal(t, "create,setup,get_hostname", s.callLog())
	assert.Equal(t, "10.0.0.7", s.setupString(0), "local_hostname")
	assert.Equal(t, "P2PHANDSHAKE", s.setupString(1), "metadata_server")
	assert.Equal(t, "rdma", s.setupString(2), "protocol")
	assert.Equal(t, "mlx5_0,mlx5_1", s.setupString(3), "device_name")
	assert.Equal(t, cfg.Mooncake.Master, s.setupString(4), "master_server_addr")
	assert.Equal(t, uint64(1<<30), s.setupSize(0), "global_segment_size")
	assert.Equal(t, uint64(16<<20), s.setupSize(1), "local_buffer_size")
	assert.NotZero(t, s.tid(0))
	assert.Equal(t, s.tid(0), s.tid(1), "create and setup run on the same locked thread")

	sum, err := fileSHA256(s.path)
	require.NoError(t, err)
	assert.Contains(t, logs.String(), "path="+s.path)
	assert.Contains(t, logs.String(), "sha256="+sum)
	assert.Contains(t, logs.String(), "hostname=10.0.0.7:12345")

	require.NoError(t, c.Destroy())
	assert.Equal(t, "create,setup,get_hostname,destroy", s.callLog())
	assert.ErrorIs(t, c.Destroy(), ErrClosed)
	assert.ErrorIs(t, c.HealthCheck(), ErrClosed)
	assert.ErrorIs(t, c.BatchIsExist([]string{"k"}, make([]int32, 1)), ErrClosed)
	assert.ErrorIs(t, c.RegisterBuffer(1, 1), ErrClosed)
	assert.Equal(t, "create,setup,get_hostname,destroy", s.callLog(), "nothing reaches a destroyed handle")
}

// TestCreateThreadIsThrownAway: the thread create ran on exits once Open
// returns (the goroutine locked to it ended without unlocking), so the
// signal mask the library sets there dies with it. The stub sees the
// thread exit through a thread-specific value's destructor; a thread
// handed back to the Go scheduler would never run it.
func TestCreateThreadIsThrownAway(t *testing.T) {
	s, _ := openStub(t)
	require.NotEqual(t, int64(os.Getpid()), s.tid(0), "create ran off the main thread, which this test binary keeps (see init)")
	assert.Equal(t, int32(1), s.waitThreadExited(eventWaitMS), "the thread create ran on has exited")
}

func TestBatchPutFromCrosses(t *testing.T) {
	s, c := openStub(t)
	mem, base := offHeap(t, 3*4096)
	keys := []string{"t/a", "t/bb/cc", "t/ключ"}
	bufs := []uintptr{base, base + 4096, base + 2*4096}
	sizes := []uint64{4096, 100, 1}
	for i := range mem {
		mem[i] = byte(i*7 + 3)
	}
	s.scriptCodes([]int64{0, int64(NoAvailableHandle), int64(TransferFail)}, 3)
	results := make([]int64, 3)

	require.NoError(t, c.BatchPutFrom(keys, bufs, sizes, results))

	assert.Equal(t, []int64{0, -200, -800}, results)
	require.Equal(t, uint64(3), s.countSeen())
	for i := range keys {
		assert.Equal(t, keys[i], s.keySeen(i), "key %d", i)
		assert.Equal(t, uint64(bufs[i]), s.seen(0, uint64(i)), "buffer %d", i)
		assert.Equal(t, sizes[i], s.seen(1, uint64(i)), "size %d", i)
		off := int(bufs[i] - base)
		assert.Equal(t, fnv1a(mem[off:off+int(sizes[i])]), s.seen(2, uint64(i)), "bytes read from buffer %d", i)
	}
	assert.NotContains(t, s.callLog(), "!", "every call reached a live, set-up handle")
}

func TestBatchPutFromPassesTheReplicateConfig(t *testing.T) {
	put := func(t *testing.T, s *stubLib, c Client) {
		t.Helper()
		_, base := offHeap(t, 64)
		require.NoError(t, c.BatchPutFrom([]string{"t/r"}, []uintptr{base}, []uint64{64}, make([]int64, 1)))
	}
	t.Run("defaults: NULL", func(t *testing.T) {
		s, c := openStub(t)
		put(t, s, c)
		assert.EqualValues(t, -1, s.replicate(0), "no replicate config: the store's defaults")
	})
	t.Run("replicas, soft pin and preferred segments", func(t *testing.T) {
		s := loadStub(t, buildStub(t, "libmooncake_store.so"))
		cfg := stubConfig(t, s.path)
		cfg.Mooncake.Replicas, cfg.Mooncake.SoftPin = 3, true
		cfg.Mooncake.PreferredSegments = []string{"10.0.0.1:13000", "10.0.0.2:13001"}
		c, err := Open(context.Background(), cfg, slog.New(slog.DiscardHandler))
		require.NoError(t, err)
		defer func() { require.NoError(t, c.Destroy()) }()
		runtime.GC() // the config lives, pinned, for the client's life
		for range 2 {
			put(t, s, c)
			assert.EqualValues(t, 3, s.replicate(0), "replica_num")
			assert.EqualValues(t, 1, s.replicate(1), "with_soft_pin")
			assert.EqualValues(t, 0, s.replicate(2), "with_hard_pin")
			require.EqualValues(t, 2, s.replicate(3), "preferred_segments_count")
			for i, want := range cfg.Mooncake.PreferredSegments {
				assert.Equal(t, want, cString(func(out []byte, n uint64) { s.preferredInto(uint64(i), out, n) }), "preferred segment %d", i)
			}
		}
	})
	t.Run("one replica and no pin is the defaults", func(t *testing.T) {
		assert.Nil(t, newReplicate(MooncakeConfig{Replicas: 1}))
		assert.Zero(t, newReplicate(MooncakeConfig{Replicas: 1}).addr())
		assert.NotNil(t, newReplicate(MooncakeConfig{Replicas: 1, SoftPin: true}))
	})
}

func TestBatchGetIntoCrosses(t *testing.T) {
	s, c := openStub(t)
	mem, base := offHeap(t, 3*64)
	for i := range mem {
		mem[i] = 0xEE
	}
	// The second key's size is past 32 bits: size_t crosses whole. The
	// stub answers -704 for it and writes nothing, as the store would.
	keys := []string{"t/xy", "t/missing", "t/short"}
	bufs := []uintptr{base, base + 64, base + 128}
	sizes := []uint64{64, 5 << 30, 64}
	s.scriptCodes([]int64{10, int64(ObjectNotFound), 64}, 3)
	results := make([]int64, 3)

	require.NoError(t, c.BatchGetInto(keys, bufs, sizes, results))

	assert.Equal(t, []int64{10, -704, 64}, results)
	assert.Equal(t, []byte("t/xyt/xyt/"), mem[:10], "the stub wrote the head of buffer 0")
	assert.Equal(t, bytes.Repeat([]byte{0xEE}, 54), mem[10:64], "the tail of buffer 0 is untouched")
	assert.Equal(t, bytes.Repeat([]byte{0xEE}, 64), mem[64:128], "a miss writes nothing")
	assert.Equal(t, []byte(strings.Repeat("t/short", 10)[:64]), mem[128:192])
	for i := range keys {
		assert.Equal(t, keys[i], s.keySeen(i))
		assert.Equal(t, uint64(bufs[i]), s.seen(0, uint64(i)))
		assert.Equal(t, sizes[i], s.seen(1, uint64(i)))
	}
}

func TestBatchIsExistCrosses(t *testing.T) {
	s, c := openStub(t)
	keys := []string{"t/1", "t/2", "t/3", "t/4"}
	s.scriptCodes([]int64{1, 0, int64(RPCFail), int64(RPCTimeout)}, 4)
	results := make([]int32, 4)

	require.NoError(t, c.BatchIsExist(keys, results))

	assert.Equal(t, []int32{1, 0, -900, -901}, results)
	for i := range keys {
		assert.Equal(t, keys[i], s.keySeen(i))
	}
}

func TestFunctionLevelFailureWritesNoResult(t *testing.T) {
	s, c := openStub(t)
	_, base := offHeap(t, 4096)
	s.scriptBatch(-1)
	keys := []string{"t/a", "t/b"}
	bufs := []uintptr{base, base + 8}
	sizes := []uint64{8, 8}

	results := []int64{7, 7}
	err := c.BatchPutFrom(keys, bufs, sizes, results)
	var ce *CallError
	require.ErrorAs(t, err, &ce)
	assert.ErrorIs(t, err, ErrCallFailed)
	assert.Equal(t, "mooncake_store_batch_put_from", ce.Func)
	assert.Equal(t, InternalError, ce.Code)
	assert.Equal(t, []int64{7, 7}, results)

	err = c.BatchGetInto(keys, bufs, sizes, results)
	require.ErrorAs(t, err, &ce)
	assert.Equal(t, "mooncake_store_batch_get_into", ce.Func)
	assert.Equal(t, []int64{7, 7}, results)

	exist := []int32{7, 7}
	err = c.BatchIsExist(keys, exist)
	require.ErrorAs(t, err, &ce)
	assert.Equal(t, "mooncake_store_batch_is_exist", ce.Func)
	assert.Equal(t, []int32{7, 7}, exist)
}

func TestBadArgumentsNeverReachTheLibrary(t *testing.T) {
	s, c := openStub(t)
	before := s.callLog()
	one := []uintptr{0x1000}
	for name, call := range map[string]func() error{
		"fewer buffers than keys": func() error {
			return c.BatchPutFrom([]string{"a", "b"}, one, []uint64{1, 1}, make([]int64, 2))
		},
		"fewer results than keys": func() error {
			return c.BatchGetInto([]string{"a"}, one, []uint64{1}, nil)
		},
		"NUL in a key": func() error {
			return c.BatchPutFrom([]string{"a\x00b"}, one, []uint64{1}, make([]int64, 1))
		},
		"empty key": func() error {
			return c.BatchIsExist([]string{""}, make([]int32, 1))
		},
		"buffer 0 with a size": func() error {
			return c.BatchGetInto([]string{"a"}, []uintptr{0}, []uint64{8}, make([]int64, 1))
		},
		"exist results short": func() error {
			return c.BatchIsExist([]string{"a", "b"}, make([]int32, 1))
		},
	} {
		assert.ErrorIs(t, call(), ErrInvalidArgument, name)
	}
	for name, call := range map[string]func() error{
		"empty put":   func() error { return c.BatchPutFrom(nil, nil, nil, nil) },
		"empty get":   func() error { return c.BatchGetInto(nil, nil, nil, nil) },
		"empty exist": func() error { return c.BatchIsExist(nil, nil) },
	} {
		assert.NoError(t, call(), name)
	}
	assert.Equal(t, before, s.callLog(), "no call reached the library")
}

func TestRegisterAndUnregisterCross(t *testing.T) {
	s, c := openStub(t)
	_, base := offHeap(t, 8192)

	require.NoError(t, c.RegisterBuffer(base, 8192))
	assert.Equal(t, uint64(base), s.registration(0))
	assert.Equal(t, uint64(8192), s.registration(1))
	require.NoError(t, c.UnregisterBuffer(base))
	assert.Equal(t, uint64(base), s.registration(2))

	s.scriptRegister(int32(InvalidParams), int32(InternalError))
	var ce *CallError
	require.ErrorAs(t, c.RegisterBuffer(base, 8192), &ce)
	assert.Equal(t, InvalidParams, ce.Code)
	assert.Equal(t, "mooncake_store_register_buffer", ce.Func)
	require.ErrorAs(t, c.UnregisterBuffer(base), &ce)
	assert.Equal(t, InternalError, ce.Code)
	assert.Equal(t, "mooncake_store_unregister_buffer", ce.Func)
}

func TestRemoveCrosses(t *testing.T) {
	s, c := openStub(t)
	r, ok := c.(Remover)
	require.True(t, ok, "the library's client removes objects")
	require.NoError(t, r.Remove("kv/v1/ab", true))
	assert.Equal(t, "kv/v1/ab", s.keySeen(0))
	assert.EqualValues(t, 1, s.removeForce())
	s.scriptRemove(int32(ObjectHasLease))
	var ce *CallError
	require.ErrorAs(t, r.Remove("kv/v1/ab", false), &ce)
	assert.Equal(t, ObjectHasLease, ce.Code)
	assert.Equal(t, "mooncake_store_remove", ce.Func)
	assert.Zero(t, s.removeForce())
	assert.ErrorIs(t, r.Remove("", true), ErrInvalidArgument)
	assert.ErrorIs(t, r.Remove("a\x00b", true), ErrInvalidArgument)
	assert.Contains(t, s.callLog(), "remove,remove")
	require.NoError(t, c.Destroy())
	assert.ErrorIs(t, r.Remove("kv/v1/ab", true), ErrClosed)
}

func TestHealthCheckAnswers(t *testing.T) {
	s, c := openStub(t)
	for _, tc := range []struct {
		rc   int32
		want error
	}{
		{0, nil},
		{1, ErrUnhealthy},
		{2, ErrUnhealthy},
		{-1, ErrCallFailed},
	} {
		s.scriptHealth(tc.rc)
		err := c.HealthCheck()
		if tc.want == nil {
			assert.NoError(t, err, "rc %d", tc.rc)
		} else {
			assert.ErrorIs(t, err, tc.want, "rc %d", tc.rc)
		}
	}
}

func TestFailedSetupNeverReachesABatchCall(t *testing.T) {
	s := loadStub(t, buildStub(t, "libmooncake_store.so"))
	s.scriptSetup(int32(InvalidParams), 0)

	c, err := Open(context.Background(), stubConfig(t, s.path), slog.New(slog.DiscardHandler))

	require.ErrorIs(t, err, ErrSetup)
	assert.Nil(t, c, "no client for a handle whose setup failed")
	var ce *CallError
	require.ErrorAs(t, err, &ce)
	assert.Equal(t, "mooncake_store_setup", ce.Func)
	assert.Equal(t, InvalidParams, ce.Code)
	assert.Equal(t, "create,setup,destroy", s.callLog(), "destroyed, and nothing else called")
}

func TestCreateReturningNullIsASetupFailure(t *testing.T) {
	s := loadStub(t, buildStub(t, "libmooncake_store.so"))
	s.scriptCreateNull(1)

	c, err := Open(context.Background(), stubConfig(t, s.path), slog.New(slog.DiscardHandler))

	require.ErrorIs(t, err, ErrSetup)
	assert.Nil(t, c)
	assert.Contains(t, err.Error(), "mooncake_store_create returned NULL")
	assert.Equal(t, "create", s.callLog())
}

func TestSetupOutlivingTheContextIsDestroyedWhenItReturns(t *testing.T) {
	s := loadStub(t, buildStub(t, "libmooncake_store.so"))
	s.scriptSetup(0, 1) // setup succeeds, but only once released
	cfg := stubConfig(t, s.path)
	ctx, cancel := context.WithCancel(context.Background())
	type opened struct {
		c   Client
		err error
	}
	done := make(chan opened, 1)
	go func() {
		c, err := Open(ctx, cfg, slog.New(slog.DiscardHandler))
		done <- opened{c, err}
	}()

	require.Equal(t, int32(1), s.waitSetupEntered(eventWaitMS), "setup was called")
	cancel()
	got := <-done
	require.ErrorIs(t, got.err, ErrSetup)
	require.ErrorIs(t, got.err, context.Canceled)
	assert.Nil(t, got.c)

	s.releaseSetup()
	require.Equal(t, int32(1), s.waitDestroyed(1, eventWaitMS), "the handle is destroyed once setup returns")
	assert.Equal(t, "create,setup,destroy", s.callLog())
}

func TestMissingSymbolsAreNamed(t *testing.T) {
	path := buildStub(t, "libmooncake_store.so", "-DSTUB_OMIT_BATCH_IS_EXIST", "-DSTUB_OMIT_REMOVE_ALL")
	cfg := stubConfig(t, path)

	var c Client
	var err error
	require.NotPanics(t, func() { c, err = Open(context.Background(), cfg, slog.New(slog.DiscardHandler)) })

	require.ErrorIs(t, err, ErrLibrary)
	assert.Nil(t, c)
	assert.Contains(t, err.Error(), "mooncake_store_batch_is_exist")
	assert.Contains(t, err.Error(), "mooncake_store_remove_all")
	assert.Contains(t, err.Error(), "lacks 2 of the 19")
	assert.Contains(t, err.Error(), path)
}

func TestLibraryHashPin(t *testing.T) {
	path := buildStub(t, "libmooncake_store.so")
	other := buildStub(t, "libother.so", "-DSTUB_OMIT_PUT")
	want, err := fileSHA256(path)
	require.NoError(t, err)
	wrong, err := fileSHA256(other)
	require.NoError(t, err)
	require.NotEqual(t, want, wrong)

	t.Run("a file not pinned is refused before it is loaded", func(t *testing.T) {
		cfg := stubConfig(t, path)
		cfg.Mooncake.SDKSHA256 = []string{wrong}
		c, err := Open(context.Background(), cfg, slog.New(slog.DiscardHandler))
		require.ErrorIs(t, err, ErrLibraryHash)
		assert.Nil(t, c)
		assert.Contains(t, err.Error(), path)
		assert.Contains(t, err.Error(), want)
		maps, err := os.ReadFile("/proc/self/maps")
		require.NoError(t, err)
		assert.NotContains(t, string(maps), path, "the refused library was never loaded")
	})
	t.Run("a pinned file opens, the pin in any case", func(t *testing.T) {
		s := loadStub(t, path)
		cfg := stubConfig(t, path)
		cfg.Mooncake.SDKSHA256 = []string{wrong, strings.ToUpper(want)}
		c, err := Open(context.Background(), cfg, slog.New(slog.DiscardHandler))
		require.NoError(t, err)
		require.NoError(t, c.Destroy())
		assert.Equal(t, "create,setup,get_hostname,destroy", s.callLog())
	})
}

func TestBareNameIsHashedAsTheFileTheLoaderChose(t *testing.T) {
	// A bare name goes to the loader, which finds a library already
	// loaded under that soname without searching: that stands in for the
	// search path, which a running process cannot change.
	// The soname is new to this process: a library is never unloaded, so
	// a name used by an earlier run (-count) would find that run's file.
	soname := "libkvshare_stub_" + strings.ToLower(rand.Text()) + ".so"
	path := buildStub(t, soname, "-Wl,-soname,"+soname)
	s := loadStub(t, path)
	want, err := fileSHA256(path)
	require.NoError(t, err)

	cfg := stubConfig(t, soname)
	cfg.Mooncake.SDKSHA256 = []string{strings.Repeat("0", 64)}
	_, err = Open(context.Background(), cfg, slog.New(slog.DiscardHandler))
	require.ErrorIs(t, err, ErrLibraryHash)
	assert.Contains(t, err.Error(), path, "the error names the file the loader mapped")
	assert.Contains(t, err.Error(), want)
	assert.Empty(t, s.callLog(), "a refused library is never called")

	cfg.Mooncake.SDKSHA256 = []string{want}
	var logs bytes.Buffer
	c, err := Open(context.Background(), cfg, slog.New(slog.NewTextHandler(&logs, nil)))
	require.NoError(t, err)
	assert.Contains(t, logs.String(), "path="+path)
	require.NoError(t, c.Destroy())
}

func TestLibraryFromTheEnvironment(t *testing.T) {
	s := loadStub(t, buildStub(t, "libmooncake_store.so"))
	t.Setenv(EnvLibrary, s.path)
	c, err := Open(context.Background(), stubConfig(t, ""), slog.New(slog.DiscardHandler))
	require.NoError(t, err)
	require.NoError(t, c.Destroy())
	assert.Equal(t, "create,setup,get_hostname,destroy", s.callLog())
}

func TestConfigLibraryWinsOverTheEnvironment(t *testing.T) {
	s := loadStub(t, buildStub(t, "libmooncake_store.so"))
	t.Setenv(EnvLibrary, "/nonexistent/kvshare/libmooncake_store.so")
	c, err := Open(context.Background(), stubConfig(t, s.path), slog.New(slog.DiscardHandler))
	require.NoError(t, err)
	require.NoError(t, c.Destroy())
	assert.Equal(t, "create,setup,get_hostname,destroy", s.callLog())
}

func TestLibraryThatCannotBeLoaded(t *testing.T) {
	for name, lib := range map[string]string{
		"a path that does not exist":       "/nonexistent/kvshare/libmooncake_store.so",
		"a name the loader cannot find":    "libkvshare_no_such_library.so",
		"a file that is not a library":     writeFile(t, "not-a-library.so", "plain text"),
		"a directory where a file belongs": t.TempDir(),
	} {
		t.Run(name, func(t *testing.T) {
			cfg := stubConfig(t, lib)
			c, err := Open(context.Background(), cfg, slog.New(slog.DiscardHandler))
			require.ErrorIs(t, err, ErrLibrary)
			assert.Nil(t, c)
			assert.Contains(t, err.Error(), lib)
		})
	}
}

func writeFile(t *testing.T, name, content string) string {
	t.Helper()
	path := t.TempDir() + "/" + name
	require.NoError(t, os.WriteFile(path, []byte(content), 0o644))
	return path
}

func TestMasterThatDoesNotAnswer(t *testing.T) {
	s := loadStub(t, buildStub(t, "libmooncake_store.so"))
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	addr := ln.Addr().String()
	require.NoError(t, ln.Close()) // nobody listens there now
	cfg := stubConfig(t, s.path)
	cfg.Mooncake.Master = addr
	// The bound is what is under test, not its length (an input: the
	// context must end): the dial is refused again and again until it
	// does.
	ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel()

	c, err := Open(ctx, cfg, slog.New(slog.DiscardHandler))

	require.ErrorIs(t, err, ErrMaster)
	require.ErrorIs(t, err, context.DeadlineExceeded)
	assert.Nil(t, c)
	assert.Contains(t, err.Error(), addr)
	// The last dial's failure is reported: refused, or, on a machine so
	// busy that the context ended before or during the first dial, cut
	// short by it.
	assert.Contains(t, err.Error(), "(last dial: dial tcp "+addr+": ", "the last dial's failure is reported")
	assert.Empty(t, s.callLog(), "no handle is created before the master answers")
}

func TestOpenRefusesBeforeLoading(t *testing.T) {
	s := loadStub(t, buildStub(t, "libmooncake_store.so"))
	t.Run("environment", func(t *testing.T) {
		t.Setenv(EnvTCPProto, "1")
		_, err := Open(context.Background(), stubConfig(t, s.path), nil)
		require.ErrorIs(t, err, ErrEnvironment)
		assert.Contains(t, err.Error(), EnvTCPProto)
	})
	t.Run("config", func(t *testing.T) {
		cfg := stubConfig(t, s.path)
		cfg.Mooncake.Workers = -1
		_, err := Open(context.Background(), cfg, nil)
		require.ErrorIs(t, err, ErrConfig)
		var ce *ConfigError
		require.ErrorAs(t, err, &ce)
		assert.Equal(t, "workers", ce.Key)
	})
	assert.Empty(t, s.callLog())
}

func TestConcurrentCallsOnOneClient(t *testing.T) {
	s, c := openStub(t)
	_, base := offHeap(t, 4096)
	var wg sync.WaitGroup
	for g := range 8 {
		wg.Go(func() {
			for i := range 50 {
				key := []string{"t/" + string(rune('a'+g)) + strings.Repeat("x", i)}
				res := make([]int64, 1)
				assert.NoError(t, c.BatchPutFrom(key, []uintptr{base}, []uint64{64}, res))
				ex := make([]int32, 1)
				assert.NoError(t, c.BatchIsExist(key, ex))
			}
		})
	}
	wg.Wait()
	assert.NotContains(t, s.callLog(), "!")
	assert.Equal(t, 800, strings.Count(s.callLog(), "batch_"))
}
