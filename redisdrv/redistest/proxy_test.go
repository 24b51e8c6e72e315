package redistest

import (
	"bufio"
	"bytes"
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/redis/rueidis"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/kvshare/kvshare/patience"
)

// proxied starts a server and a proxy in front of it, both ended with the
// test.
func proxied(t *testing.T) (*Server, *Proxy) {
	t.Helper()
	s := StartForTest(t, Options{})
	p, err := NewProxy(s.Addr())
	require.NoError(t, err)
	t.Cleanup(func() { assert.NoError(t, p.Close()) })
	return s, p
}

// rawConn is a plain TCP client of addr for byte-level checks, closed
// with the test.
type rawConn struct {
	t    *testing.T
	conn net.Conn
	r    *bufio.Reader
}

func dialRaw(t *testing.T, addr string) *rawConn {
	t.Helper()
	conn, err := net.DialTimeout("tcp", addr, waitBound)
	require.NoError(t, err)
	t.Cleanup(func() { conn.Close() })
	require.NoError(t, conn.SetDeadline(time.Now().Add(waitBound)))
	return &rawConn{t: t, conn: conn, r: bufio.NewReader(conn)}
}

// send writes commands, each a list of words, in one write.
func (c *rawConn) send(cmds ...[]string) {
	c.t.Helper()
	var b bytes.Buffer
	for _, cmd := range cmds {
		fmt.Fprintf(&b, "*%d\r\n", len(cmd))
		for _, a := range cmd {
			fmt.Fprintf(&b, "$%d\r\n%s\r\n", len(a), a)
		}
	}
	_, err := c.conn.Write(b.Bytes())
	require.NoError(c.t, err)
}

// reply reads one reply's bytes.
func (c *rawConn) reply() string {
	c.t.Helper()
	out, _, err := readReply(c.r, nil)
	require.NoError(c.t, err)
	return string(out)
}

func bulk(s string) string { return fmt.Sprintf("$%d\r\n%s\r\n", len(s), s) }

func TestProxyPassesPipelines(t *testing.T) {
	_, p := proxied(t)
	c := newClient(t, p.Addr())
	const n = 64
	for round := range 2 {
		var cmds rueidis.Commands // a built command is spent once sent
		for i := range n {
			k := fmt.Sprintf("k%02d", i)
			cmds = append(cmds, c.B().Set().Key(k).Value(strings.Repeat("v", i+1)).Nx().Build(), c.B().Strlen().Key(k).Build())
		}
		res := c.DoMulti(boundedCtx(t), cmds...)
		require.Len(t, res, 2*n)
		for i := range n {
			if round == 0 {
				ok, err := res[2*i].ToString()
				require.NoError(t, err)
				assert.Equal(t, "OK", ok)
			} else {
				assert.True(t, rueidis.IsRedisNil(res[2*i].Error()), "SET NX of an existing key answers nil")
			}
			size, err := res[2*i+1].AsInt64()
			require.NoError(t, err)
			assert.Equal(t, int64(i+1), size)
		}
	}
	var gets rueidis.Commands
	for i := range n {
		gets = append(gets, c.B().Get().Key(fmt.Sprintf("k%02d", i)).Build())
	}
	for i, r := range c.DoMulti(boundedCtx(t), gets...) {
		v, err := r.ToString()
		require.NoError(t, err)
		assert.Equal(t, strings.Repeat("v", i+1), v)
	}
	assert.Equal(t, 2*n, p.Seen(Command("set")))
	assert.Equal(t, n, p.Seen(Command("GET")))
}

func TestProxyLargeValuesRoundTripExactly(t *testing.T) {
	_, p := proxied(t)
	c := newClient(t, p.Addr())
	values := map[string][]byte{
		"big":   make([]byte, 4<<20),
		"odd":   make([]byte, 4<<20+13),
		"large": make([]byte, 9<<20),
		"empty": {},
	}
	names := []string{"big", "odd", "large", "empty"}
	var sets rueidis.Commands
	for _, k := range names {
		_, _ = rand.Read(values[k])
		sets = append(sets, c.B().Set().Key(k).Value(rueidis.BinaryString(values[k])).Build())
	}
	for _, r := range c.DoMulti(boundedCtx(t), sets...) {
		require.NoError(t, r.Error())
	}
	gets := func() rueidis.Commands { // a built command is spent once sent
		var cmds rueidis.Commands
		for _, k := range names {
			cmds = append(cmds, c.B().Get().Key(k).Build())
		}
		return cmds
	}
	stream := c.DoMultiStream(boundedCtx(t), gets()...)
	for _, k := range names {
		require.True(t, stream.HasNext())
		var got bytes.Buffer
		n, err := stream.WriteTo(&got)
		require.NoError(t, err)
		assert.Equal(t, int64(len(values[k])), n)
		assert.True(t, bytes.Equal(values[k], got.Bytes()), "value %s comes back byte for byte", k)
	}
	assert.False(t, stream.HasNext())
	// The pipelined path too.
	for i, r := range c.DoMulti(boundedCtx(t), gets()...) {
		got, err := r.AsBytes()
		require.NoError(t, err)
		assert.True(t, bytes.Equal(values[names[i]], got), "value %s through DoMulti", names[i])
	}
}

func TestProxyAnswersInlineCommands(t *testing.T) {
	_, p := proxied(t)
	c := dialRaw(t, p.Addr())
	_, err := c.conn.Write([]byte("PING\r\nECHO hello\r\n"))
	require.NoError(t, err)
	assert.Equal(t, "+PONG\r\n", c.reply())
	assert.Equal(t, bulk("hello"), c.reply())
}

func TestHoldRepliesHoldsOneKeyWhileOtherConnectionsPass(t *testing.T) {
	s, p := proxied(t)
	seed := serverClient(t, s)
	require.NoError(t, seed.Do(boundedCtx(t), seed.B().Mset().KeyValue().KeyValue("held", "1").KeyValue("free", "2").Build()).Error())
	hold := p.HoldReplies(Command("GET", "held"))

	held := newClient(t, p.Addr())
	got := make(chan rueidis.RedisResult, 1)
	go func() { got <- held.Do(boundedCtx(t), held.B().Get().Key("held").Build()) }()
	require.NoError(t, hold.Held(boundedCtx(t)))
	assert.True(t, hold.Holding("held"))
	assert.Equal(t, 1, hold.Count())

	for i := range 3 { // each client its own connection
		other := newClient(t, p.Addr())
		v, err := other.Do(boundedCtx(t), other.B().Get().Key("free").Build()).ToString()
		require.NoError(t, err, "client %d", i)
		assert.Equal(t, "2", v)
	}
	select {
	case r := <-got:
		t.Fatalf("the held reply arrived before Release: %v", r)
	default:
	}
	hold.Release()
	hold.Release() // idempotent
	select {
	case r := <-got:
		v, err := r.ToString()
		require.NoError(t, err)
		assert.Equal(t, "1", v)
	case <-boundedCtx(t).Done():
		t.Fatalf("the held reply did not arrive within the bound of Release")
	}
	assert.False(t, hold.Holding("held"))
	v, err := held.Do(boundedCtx(t), held.B().Get().Key("held").Build()).ToString()
	require.NoError(t, err, "after Release nothing is held any more")
	assert.Equal(t, "1", v)
}

func TestHoldingSeesCommandsBehindAHeldReply(t *testing.T) {
	s, p := proxied(t)
	seed := serverClient(t, s)
	require.NoError(t, seed.Do(boundedCtx(t), seed.B().Mset().KeyValue().KeyValue("a", "1").KeyValue("b", "2").Build()).Error())
	hold := p.HoldReplies(Command("GET", "a"))
	c := dialRaw(t, p.Addr())
	c.send([]string{"GET", "a"}, []string{"GET", "b"}, []string{"STRLEN", "b"})
	require.NoError(t, hold.Held(boundedCtx(t)))
	assert.True(t, hold.Holding("a"), "the held reply's own key")
	waitUntil(t, "GET b shows as waiting behind the held GET a", func() bool { return hold.Holding("b") })
	assert.False(t, hold.Holding("c"))

	other := p.HoldReplies(Command("GET", "nothing"))
	assert.False(t, other.Holding("b"), "another hold does not hold this connection")
	ctx, cancel := context.WithTimeout(t.Context(), 50*time.Millisecond) // an input: nothing is held there
	defer cancel()
	require.ErrorIs(t, other.Held(ctx), context.DeadlineExceeded)
	other.Release()

	hold.Release()
	assert.Equal(t, bulk("1"), c.reply())
	assert.Equal(t, bulk("2"), c.reply())
	assert.Equal(t, ":1\r\n", c.reply())
	assert.False(t, hold.Holding("b"))
}

func TestStallRepliesWritesExactlyAfterBytes(t *testing.T) {
	s, p := proxied(t)
	value := strings.Repeat("0123456789", 10)
	seed := serverClient(t, s)
	require.NoError(t, seed.Do(boundedCtx(t), seed.B().Set().Key("k").Value(value).Build()).Error())
	want := bulk(value)

	const after = 10
	stall := p.StallReplies(Command("GET", "k"), after)
	c := dialRaw(t, p.Addr())
	_, err := c.conn.Write([]byte("*2\r\n$3\r\nGET\r\n$1\r\nk\r\n"))
	require.NoError(t, err)
	require.NoError(t, stall.Held(boundedCtx(t)))

	first := make([]byte, after)
	_, err = io.ReadFull(c.r, first)
	require.NoError(t, err)
	assert.Equal(t, want[:after], string(first))
	// Nothing more comes while stalled: a short read deadline passes with
	// no byte.
	require.NoError(t, c.conn.SetReadDeadline(time.Now().Add(200*time.Millisecond)))
	n, err := c.r.Read(make([]byte, 1))
	assert.Zero(t, n, "a byte past the first %d arrived while stalled", after)
	require.ErrorIs(t, err, os.ErrDeadlineExceeded)

	stall.Release()
	require.NoError(t, c.conn.SetReadDeadline(time.Now().Add(waitBound)))
	rest := make([]byte, len(want)-after)
	_, err = io.ReadFull(c.r, rest)
	require.NoError(t, err)
	assert.Equal(t, want, string(first)+string(rest))
}

func TestStallReleaseAfterClientClosedIsDropped(t *testing.T) {
	s, p := proxied(t)
	seed := serverClient(t, s)
	require.NoError(t, seed.Do(boundedCtx(t), seed.B().Set().Key("k").Value(strings.Repeat("x", 1<<20)).Build()).Error())
	stall := p.StallReplies(Command("GET", "k"), 100)
	c := dialRaw(t, p.Addr())
	c.send([]string{"GET", "k"})
	require.NoError(t, stall.Held(boundedCtx(t)))
	require.NoError(t, c.conn.Close())
	waitUntil(t, "the proxy drops the closed connection", func() bool { return p.Conns() == 0 })
	stall.Release()
	// The proxy still serves.
	c2 := dialRaw(t, p.Addr())
	c2.send([]string{"STRLEN", "k"})
	assert.Equal(t, ":1048576\r\n", c2.reply())
}

func TestCrashOnClosesTheConnection(t *testing.T) {
	s, p := proxied(t)
	seed := serverClient(t, s)
	require.NoError(t, seed.Do(boundedCtx(t), seed.B().Set().Key("boom").Value("x").Build()).Error())
	p.CrashOn(Command("GET", "boom"))

	c := newClient(t, p.Addr())
	err := c.Do(boundedCtx(t), c.B().Get().Key("boom").Build()).Error()
	require.Error(t, err, "a crashed command gets no reply")
	_, isRedis := rueidis.IsRedisErr(err)
	assert.False(t, isRedis, "a connection error, not a Redis error reply: %v", err)
	assert.False(t, rueidis.IsRedisNil(err))
	assert.Equal(t, 1, p.Seen(Command("GET", "boom")))

	// rueidis dials again for the next command.
	var v string
	waitUntil(t, "a later command is served on a new connection", func() bool {
		v, err = c.Do(boundedCtx(t), c.B().Set().Key("after").Value("1").Build()).ToString()
		return err == nil
	})
	assert.Equal(t, "OK", v)

	// On a raw connection: the replies before the crash arrive, then the
	// connection ends.
	raw := dialRaw(t, p.Addr())
	raw.send([]string{"GET", "after"}, []string{"GET", "boom"}, []string{"GET", "after"})
	assert.Equal(t, bulk("1"), raw.reply())
	_, _, err = readReply(raw.r, nil)
	require.Error(t, err)
	assert.False(t, errors.Is(err, os.ErrDeadlineExceeded), "the connection ends instead of hanging: %v", err)
}

func TestFailOnAnswersInOrder(t *testing.T) {
	s, p := proxied(t)
	seed := serverClient(t, s)
	require.NoError(t, seed.Do(boundedCtx(t), seed.B().Set().Key("bad").Value("stored").Build()).Error())
	p.FailOn(Command("GET", "bad"), "injected\r\nfailure")
	c := newClient(t, p.Addr())
	res := c.DoMulti(boundedCtx(t),
		c.B().Set().Key("a").Value("1").Build(),
		c.B().Get().Key("a").Build(),
		c.B().Get().Key("bad").Build(),
		c.B().Get().Key("a").Build(),
		c.B().Strlen().Key("bad").Build(),
	)
	require.Len(t, res, 5)
	ok, err := res[0].ToString()
	require.NoError(t, err)
	assert.Equal(t, "OK", ok)
	for _, i := range []int{1, 3} {
		v, err := res[i].ToString()
		require.NoError(t, err)
		assert.Equal(t, "1", v, "reply %d", i)
	}
	redisErr, isRedis := rueidis.IsRedisErr(res[2].Error())
	require.True(t, isRedis, "a Redis error reply: %v", res[2].Error())
	assert.Equal(t, "injected  failure", redisErr.Error(), "rueidis drops the \"ERR \" prefix")
	size, err := res[4].AsInt64()
	require.NoError(t, err)
	assert.Equal(t, int64(len("stored")), size, "STRLEN of the same key is forwarded")
	assert.Equal(t, 1, p.Seen(Command("GET", "bad")))

	raw := dialRaw(t, p.Addr())
	raw.send([]string{"GET", "a"}, []string{"get", "bad"}, []string{"GET", "a"})
	assert.Equal(t, bulk("1"), raw.reply())
	assert.Equal(t, "-ERR injected  failure\r\n", raw.reply())
	assert.Equal(t, bulk("1"), raw.reply())
}

func TestSeenCounts(t *testing.T) {
	_, p := proxied(t)
	c := dialRaw(t, p.Addr())
	cmds := [][]string{
		{"SET", "k", "1"}, {"GET", "k"}, {"get", "k"}, {"GET", "other"}, {"Get", "k"},
		{"SET", "other", "2"}, {"MGET", "x", "k", "y"}, {"EXISTS", "x", "y", "z"},
		{"DEL", "x", "k"}, {"STRLEN", "k"}, {"PING"},
	}
	c.send(cmds...)
	for range cmds {
		c.reply()
	}
	for _, tc := range []struct {
		m    Match
		want int
	}{
		{Command("GET", "k"), 3},
		{Command("GET"), 4},
		{Command("get", "k", "other"), 4},
		{Command("SET"), 2},
		{Command("SET", "1"), 0}, // a value is no key
		{Command("MGET", "k"), 1},
		{Command("MGET", "absent"), 0},
		{Command("EXISTS", "z"), 1},
		{Command("DEL", "k"), 1},
		{Command("STRLEN", "k"), 1},
		{Command("PING"), 1},
		{Command("PING", "k"), 0},
		{Any(), len(cmds)},
	} {
		assert.Equal(t, tc.want, p.Seen(tc.m))
	}
}

func TestDropAllClosesConnectionsAndClientsReconnect(t *testing.T) {
	_, p := proxied(t)
	c := newClient(t, p.Addr())
	require.NoError(t, c.Do(boundedCtx(t), c.B().Set().Key("k").Value("v").Build()).Error())
	raw := dialRaw(t, p.Addr())
	raw.send([]string{"PING"})
	assert.Equal(t, "+PONG\r\n", raw.reply())
	waitUntil(t, "both connections are open", func() bool { return p.Conns() >= 2 })

	p.DropAll()
	_, _, err := readReply(raw.r, nil)
	require.ErrorIs(t, err, io.EOF)
	waitUntil(t, "the rueidis client reconnects and is served", func() bool {
		v, err := c.Do(boundedCtx(t), c.B().Get().Key("k").Build()).ToString()
		return err == nil && v == "v"
	})
}

func TestProxyToAbsentTargetClosesClients(t *testing.T) {
	s := StartForTest(t, Options{})
	require.NoError(t, s.Kill())
	p, err := NewProxy(s.Addr())
	require.NoError(t, err)
	defer func() { assert.NoError(t, p.Close()) }()
	raw := dialRaw(t, p.Addr())
	raw.send([]string{"PING"})
	_, _, err = readReply(raw.r, nil)
	require.Error(t, err)
	assert.False(t, errors.Is(err, os.ErrDeadlineExceeded), "the connection is closed, not left hanging: %v", err)

	require.NoError(t, s.Restart(t.Context()))
	raw = dialRaw(t, p.Addr())
	raw.send([]string{"PING"})
	assert.Equal(t, "+PONG\r\n", raw.reply(), "a server started later is reached")
}

func TestServerGoneClosesIdleClients(t *testing.T) {
	s, p := proxied(t)
	raw := dialRaw(t, p.Addr())
	raw.send([]string{"PING"})
	assert.Equal(t, "+PONG\r\n", raw.reply())
	require.NoError(t, s.Kill())
	_, _, err := readReply(raw.r, nil)
	require.ErrorIs(t, err, io.EOF, "the client sees the server's end without sending anything")
	waitUntil(t, "the proxy forgets the connection", func() bool { return p.Conns() == 0 })
}

func TestNewProxyRefusesBadTarget(t *testing.T) {
	_, err := NewProxy("no-port")
	require.ErrorIs(t, err, ErrOptions)
}

// proxyFrames counts the goroutines running the proxy's code.
func proxyFrames() int {
	buf := make([]byte, 1<<20)
	for {
		n := runtime.Stack(buf, true)
		if n < len(buf) {
			buf = buf[:n]
			break
		}
		buf = make([]byte, 2*len(buf))
	}
	n := 0
	for _, g := range strings.Split(string(buf), "\n\n") {
		if strings.Contains(g, "redistest.(*Proxy)") || strings.Contains(g, "redistest.(*proxyConn)") {
			n++
		}
	}
	return n
}

func TestCloseWithTrafficInFlight(t *testing.T) {
	s := StartForTest(t, Options{})
	p, err := NewProxy(s.Addr())
	require.NoError(t, err)
	hold := p.HoldReplies(Command("GET", "held"))
	stall := p.StallReplies(Command("GET", "stalled"), 5)

	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	var clients sync.WaitGroup
	value := strings.Repeat("v", 64<<10)
	for i := range 4 {
		c := newClient(t, p.Addr())
		clients.Add(1)
		go func() {
			defer clients.Done()
			for ctx.Err() == nil {
				k := fmt.Sprintf("k%d", i)
				c.DoMulti(ctx, c.B().Set().Key(k).Value(value).Build(), c.B().Get().Key(k).Build(), c.B().Strlen().Key(k).Build())
			}
		}()
	}
	for _, key := range []string{"held", "stalled"} {
		c := dialRaw(t, p.Addr())
		c.send([]string{"SET", key, value}, []string{"GET", key}, []string{"GET", "k0"})
	}
	require.NoError(t, hold.Held(boundedCtx(t)))
	require.NoError(t, stall.Held(boundedCtx(t)))
	waitUntil(t, "traffic flows", func() bool { return p.Seen(Command("STRLEN")) > 20 })

	require.NoError(t, p.Close(), "Close returns within its bound")
	assert.Zero(t, p.live.Load(), "no proxy goroutine counted after Close")
	waitUntil(t, "no goroutine runs the proxy's code", func() bool { return proxyFrames() == 0 })
	require.NoError(t, p.Close(), "Close is idempotent")
	_, err = net.DialTimeout("tcp", p.Addr(), time.Second)
	assert.Error(t, err, "the listener is closed")

	cancel()
	done := make(chan struct{})
	go func() { clients.Wait(); close(done) }()
	if !patience.For(t).Wait(done) {
		t.Fatalf("clients still running a bound (%v) after their context ended", patience.Wait())
	}
}
