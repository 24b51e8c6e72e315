package doctor

import (
	"encoding/binary"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/kvshare/kvshare/patience"
)

// listen opens a TCP listener on addr until the test ends and returns
// its port.
func listen(t *testing.T, network, addr string) int {
	t.Helper()
	l, err := net.Listen(network, addr)
	require.NoError(t, err)
	t.Cleanup(func() { l.Close() })
	return l.Addr().(*net.TCPAddr).Port
}

// The socket lister finds this process's own listeners, by address.
func TestProcListenersFindsOurOwn(t *testing.T) {
	port := listen(t, "tcp4", "127.0.0.1:0")
	ls, err := procListeners()
	require.NoError(t, err)
	assert.Contains(t, ls, listener{Addr: netip.MustParseAddr("127.0.0.1"), Port: port, Inode: inodeOf(t, ls, port)})
}

func inodeOf(t *testing.T, ls []listener, port int) string {
	t.Helper()
	for _, l := range ls {
		if l.Port == port {
			return l.Inode
		}
	}
	t.Fatalf("no listener on port %d among %v", port, ls)
	return ""
}

// Listeners opened after the snapshot are listed; loopback passes, any
// address warns.
func TestListenersCheck(t *testing.T) {
	before, err := procListeners()
	require.NoError(t, err)
	loop := listen(t, "tcp4", "127.0.0.1:0")
	f := checkListeners(t.Context(), procListeners, inodes(before), "127.0.0.1", patience.Wait())
	assert.Equal(t, OK, f.Verdict, f.Detail)
	assert.Contains(t, f.Detail, "the client listens on 1 socket(s), each on loopback or 127.0.0.1")
	assert.Contains(t, f.Detail, fmt.Sprintf("\n127.0.0.1:%d (loopback)", loop))

	any4 := listen(t, "tcp4", "0.0.0.0:0")
	f = checkListeners(t.Context(), procListeners, inodes(before), "127.0.0.1", patience.Wait())
	assert.Equal(t, Warn, f.Verdict, f.Detail)
	assert.Contains(t, f.Detail, "the client listens on 2 socket(s), 1 of them beyond loopback and 127.0.0.1")
	assert.Contains(t, f.Detail, "section Security")
	assert.Contains(t, f.Detail, fmt.Sprintf("\n0.0.0.0:%d (every address)", any4))
	assert.Contains(t, f.Detail, fmt.Sprintf("\n127.0.0.1:%d (loopback)", loop))

	if l, err := net.Listen("tcp6", "[::]:0"); err == nil { // where IPv6 is on
		defer l.Close()
		f = checkListeners(t.Context(), procListeners, inodes(before), "127.0.0.1", patience.Wait())
		assert.Equal(t, Warn, f.Verdict, f.Detail)
		assert.Contains(t, f.Detail, fmt.Sprintf("\n[::]:%d (every address)", l.Addr().(*net.TCPAddr).Port))
	}

	f = checkListeners(t.Context(), procListeners, inodes(mustList(t)), "127.0.0.1", patience.Wait())
	assert.Equal(t, OK, f.Verdict)
	assert.Equal(t, "the client opened no listening socket", f.Detail)
}

func mustList(t *testing.T) []listener {
	ls, err := procListeners()
	require.NoError(t, err)
	return ls
}

// local_hostname's own address passes, with or without a port; any other
// address warns.
func TestListenersAgainstLocalHostname(t *testing.T) {
	fixed := func() ([]listener, error) {
		return []listener{
			{Addr: netip.MustParseAddr("10.0.0.8"), Port: 15002, Inode: "2"},
			{Addr: netip.MustParseAddr("10.0.0.7"), Port: 15001, Inode: "1"},
			{Addr: netip.MustParseAddr("::1"), Port: 15003, Inode: "3"},
			{Addr: netip.MustParseAddr("::"), Port: 15004, Inode: "4"},
		}, nil
	}
	for _, host := range []string{"10.0.0.7", "10.0.0.7:12345"} {
		f := checkListeners(t.Context(), fixed, nil, host, patience.Wait())
		assert.Equal(t, Warn, f.Verdict, f.Detail)
		assert.Contains(t, f.Detail, "4 socket(s), 2 of them beyond loopback and "+host)
		assert.Contains(t, f.Detail, "\n10.0.0.7:15001 ([mooncake] local_hostname)\n10.0.0.8:15002 (neither loopback nor [mooncake] local_hostname)\n[::1]:15003 (loopback)\n[::]:15004 (every address)", "in port order")
	}
	f := checkListeners(t.Context(), fixed, map[string]bool{"2": true, "4": true}, "10.0.0.7", patience.Wait())
	assert.Equal(t, OK, f.Verdict, "sockets open before the client are not its own: %s", f.Detail)

	f = checkListeners(t.Context(), func() ([]listener, error) { return nil, errors.New("no /proc") }, nil, "10.0.0.7", patience.Wait())
	assert.Equal(t, Skip, f.Verdict)
	assert.Contains(t, f.Detail, "cannot list this process's sockets: no /proc")
}

func TestListenRows(t *testing.T) {
	if binary.NativeEndian.Uint16([]byte{1, 0}) != 1 {
		t.Skip("the tables below are a little-endian host's")
	}
	table := `  sl  local_address rem_address   st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode
   0: 0100007F:3AE2 00000000:0000 0A 00000000:00000000 00:00000000 00000000  1000        0 111 1 0000000000000000 100 0 0 10 0
   1: 00000000:3E82 00000000:0000 0A 00000000:00000000 00:00000000 00000000  1000        0 222 1 0000000000000000 100 0 0 10 0
   2: 0100007F:3AE2 0100007F:C350 01 00000000:00000000 00:00000000 00000000  1000        0 333 1 0000000000000000 20 4 30 10 -1
   3: garbage
`
	assert.Equal(t, []listener{
		{Addr: netip.MustParseAddr("127.0.0.1"), Port: 15074, Inode: "111"},
		{Addr: netip.MustParseAddr("0.0.0.0"), Port: 16002, Inode: "222"},
	}, listenRows([]byte(table)), "only LISTEN rows")

	six := `  sl  local_address                         remote_address                        st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode
   0: 00000000000000000000000000000000:3D09 00000000000000000000000000000000:0000 0A 00000000:00000000 00:00000000 00000000  1000        0 444 1 0000000000000000 100 0 0 10 0
   1: 00000000000000000000000001000000:3D0A 00000000000000000000000000000000:0000 0A 00000000:00000000 00:00000000 00000000  1000        0 555 1 0000000000000000 100 0 0 10 0
   2: 0000000000000000FFFF00000100007F:3D0B 00000000000000000000000000000000:0000 0A 00000000:00000000 00:00000000 00000000  1000        0 666 1 0000000000000000 100 0 0 10 0
`
	assert.Equal(t, []listener{
		{Addr: netip.MustParseAddr("::"), Port: 15625, Inode: "444"},
		{Addr: netip.MustParseAddr("::1"), Port: 15626, Inode: "555"},
		{Addr: netip.MustParseAddr("127.0.0.1"), Port: 15627, Inode: "666"}, // IPv4-mapped
	}, listenRows([]byte(six)))
}
