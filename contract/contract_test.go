package contract_test

import (
	"errors"
	"math"
	"strings"
	"testing"

	"github.com/kvshare/kvshare/contract"
)

// The contract module requires nothing, not even testify: its tests use
// the standard library alone.

func TestSlotRegionValidate(t *testing.T) {
	good := contract.SlotRegion{Base: 0x10000, SlotBytes: 4096, SlotCount: 4, Len: 16384, Kind: contract.Host}
	if err := good.Validate(); err != nil {
		t.Fatalf("good region refused: %v", err)
	}
	cases := []struct {
		name string
		edit func(*contract.SlotRegion)
		want string
	}{
		{"zero base", func(r *contract.SlotRegion) { r.Base = 0 }, "Base"},
		{"zero kind", func(r *contract.SlotRegion) { r.Kind = 0 }, "Kind"},
		{"unknown kind", func(r *contract.SlotRegion) { r.Kind = 9 }, "Kind"},
		{"zero slot bytes", func(r *contract.SlotRegion) { r.SlotBytes = 0 }, "SlotBytes"},
		{"negative slot bytes", func(r *contract.SlotRegion) { r.SlotBytes = -1 }, "SlotBytes"},
		{"zero slot count", func(r *contract.SlotRegion) { r.SlotCount = 0 }, "SlotCount"},
		{"short len", func(r *contract.SlotRegion) { r.Len = 16383 }, "Len"},
		{"overflow", func(r *contract.SlotRegion) { r.SlotBytes = math.MaxInt64 / 2; r.SlotCount = 3 }, "overflows"},
		{"wraps", func(r *contract.SlotRegion) { r.Base = math.MaxUint64 - 100 }, "wraps"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := good
			c.edit(&r)
			err := r.Validate()
			if !errors.Is(err, contract.ErrInvalidRegion) {
				t.Fatalf("Validate() = %v, want ErrInvalidRegion", err)
			}
			if !strings.Contains(err.Error(), c.want) {
				t.Errorf("error %q does not name %q", err, c.want)
			}
		})
	}
}

func TestRegionSpecValidateNamesLabel(t *testing.T) {
	err := contract.RegionSpec{Label: "layer-3", Region: contract.SlotRegion{Kind: contract.Host}}.Validate()
	if !errors.Is(err, contract.ErrInvalidRegion) || !strings.Contains(err.Error(), `"layer-3"`) {
		t.Fatalf("error %v does not wrap ErrInvalidRegion naming the label", err)
	}
}

func TestSlotRegionSlotAndContains(t *testing.T) {
	r := contract.SlotRegion{Base: 0x1000, SlotBytes: 256, SlotCount: 4, Len: 1024 + 16, Kind: contract.Host}
	if got := r.Slot(2); got != (contract.Span{Addr: 0x1200, Len: 256}) {
		t.Fatalf("Slot(2) = %+v", got)
	}
	cases := []struct {
		s    contract.Span
		want bool
	}{
		{contract.Span{Addr: 0x1000, Len: 1040}, true},  // the whole block
		{contract.Span{Addr: 0x1300, Len: 256}, true},   // last slot
		{contract.Span{Addr: 0x1410, Len: 0}, true},     // empty span at the end
		{contract.Span{Addr: 0x1000, Len: 1041}, false}, // one byte past the end
		{contract.Span{Addr: 0xfff, Len: 2}, false},     // starts before Base
		{contract.Span{Addr: 0x1411, Len: 0}, false},    // starts past the end
		{contract.Span{Addr: 0x1000, Len: -1}, false},   // negative length
		{contract.Span{Addr: 0x1001, Len: math.MaxInt64}, false},
	}
	for _, c := range cases {
		if got := r.Contains(c.s); got != c.want {
			t.Errorf("Contains(%#x+%d) = %v, want %v", c.s.Addr, c.s.Len, got, c.want)
		}
	}
}

func TestOutcomePrefix(t *testing.T) {
	cases := []struct {
		d    []bool
		want int
	}{
		{nil, 0},
		{[]bool{false}, 0},
		{[]bool{true, true, true}, 3},
		{[]bool{true, false, true}, 1},
	}
	for _, c := range cases {
		if got := (contract.Outcome{Delivered: c.d}).Prefix(); got != c.want {
			t.Errorf("Prefix(%v) = %d, want %d", c.d, got, c.want)
		}
	}
}

func TestRowStatus(t *testing.T) {
	want := map[contract.RowStatus]string{
		contract.Pending: "pending", contract.Ready: "ready", contract.Miss: "miss",
		contract.NotReady: "not-ready", contract.Declined: "declined",
		contract.Fault: "fault", contract.Cancelled: "cancelled",
	}
	if len(want) != int(contract.RowStatusCount) {
		t.Fatalf("RowStatusCount = %d, want %d", contract.RowStatusCount, len(want))
	}
	for s, name := range want {
		if s.String() != name {
			t.Errorf("%d.String() = %q, want %q", s, s.String(), name)
		}
		if s.Final() != (s != contract.Pending) {
			t.Errorf("%v.Final() = %v", s, s.Final())
		}
	}
	if contract.RowStatus(99).Final() || contract.RowStatus(99).String() != "RowStatus(99)" {
		t.Errorf("unknown status not reported as such")
	}
	st := contract.OpState{Rows: []contract.RowStatus{contract.Ready, contract.Pending}}
	if st.Settled() {
		t.Errorf("a pending row settled the state")
	}
	st.Rows[1] = contract.Miss
	if !st.Settled() {
		t.Errorf("final rows did not settle the state")
	}
}

func TestStringers(t *testing.T) {
	for _, c := range []struct{ got, want string }{
		{contract.Host.String(), "host"},
		{contract.Device.String(), "device"},
		{contract.MemoryKind(0).String(), "MemoryKind(0)"},
		{contract.Open.String(), "open"},
		{contract.Ended.String(), "ended"},
		{contract.Unprovable.String(), "unprovable"},
		{contract.Access(7).String(), "Access(7)"},
	} {
		if c.got != c.want {
			t.Errorf("got %q, want %q", c.got, c.want)
		}
	}
}

func TestRowBatchBytes(t *testing.T) {
	b := contract.RowBatch{Rows: []contract.Row{
		{Name: []byte("a"), Spans: []contract.Span{{Addr: 1, Len: 10}}},
		{Name: []byte("b"), Spans: []contract.Span{{Addr: 100, Len: 5}, {Addr: 200, Len: 7}}},
	}}
	if b.Len() != 2 || b.Bytes() != 22 || b.Rows[1].Bytes() != 12 {
		t.Fatalf("Len=%d Bytes=%d row1=%d", b.Len(), b.Bytes(), b.Rows[1].Bytes())
	}
	if (contract.Span{Addr: 100, Len: 5}).End() != 105 {
		t.Fatalf("Span.End wrong")
	}
	v := contract.View{Groups: []contract.Group{{Slots: []int32{1, 2}}, {Slots: []int32{3}}}}
	if v.Rows() != 3 {
		t.Fatalf("View.Rows = %d", v.Rows())
	}
}

func TestRegistrationError(t *testing.T) {
	live := &contract.RegistrationError{Registration: 3, Err: errors.New("boom")}
	dead := &contract.RegistrationError{Err: errors.New("boom")}
	if !live.MayBeLive() || dead.MayBeLive() {
		t.Fatalf("MayBeLive wrong")
	}
	if !strings.Contains(live.Error(), "may be live") || strings.Contains(dead.Error(), "may be live") {
		t.Fatalf("messages: %q / %q", live, dead)
	}
	if errors.Unwrap(live).Error() != "boom" {
		t.Fatalf("Unwrap wrong")
	}
}

// suffixKeys is a key maker for the tests: "k:" then the name with every
// byte below 'a' written as '~' and the byte plus 'a'. It is injective
// and never emits a NUL byte, and has no key for names over 8 bytes.
type suffixKeys struct{}

func (suffixKeys) KeyLen(n int) int {
	if n < 1 || n > 8 {
		return 0
	}
	return 2 + 2*n
}

func (k suffixKeys) AppendKey(dst, name []byte) []byte {
	if k.KeyLen(len(name)) == 0 {
		return dst
	}
	dst = append(dst, 'k', ':')
	for _, c := range name {
		if c < 'a' {
			dst = append(dst, '~', c+'a')
		} else {
			dst = append(dst, c, c)
		}
	}
	return dst
}

func TestRowBatchKeys(t *testing.T) {
	b := contract.RowBatch{Keys: suffixKeys{}, Rows: []contract.Row{
		{Name: []byte("ab"), Spans: []contract.Span{{Addr: 1, Len: 4}}},
		{Name: []byte{0, 'z'}, Spans: []contract.Span{{Addr: 8, Len: 2}, {Addr: 16, Len: 3}}},
	}}
	if got := b.Key(0); got != "k:aabb" {
		t.Errorf("Key(0) = %q, want %q", got, "k:aabb")
	}
	if got := b.Key(1); got != "k:~azz" {
		t.Errorf("Key(1) = %q, want %q", got, "k:~azz")
	}
	dst := []byte("keep|")
	dst = b.AppendKey(dst, 1)
	if string(dst) != "keep|k:~azz" {
		t.Errorf("AppendKey appended to %q, want %q", dst, "keep|k:~azz")
	}
	if b.Len() != 2 || b.Bytes() != 9 || b.Rows[1].Bytes() != 5 {
		t.Errorf("Len, Bytes = %d, %d, want 2, 9", b.Len(), b.Bytes())
	}
	buf := make([]byte, 0, 64)
	if n := testing.AllocsPerRun(100, func() { buf = b.AppendKey(buf[:0], 0) }); n != 0 {
		t.Errorf("AppendKey into a buffer with room allocates %v times, want 0", n)
	}
}

func TestDirection(t *testing.T) {
	cases := []struct {
		d     contract.Direction
		s     string
		valid bool
	}{
		{contract.PutDir, "put", true},
		{contract.GetDir, "get", true},
		{0, "Direction(0)", false},
		{7, "Direction(7)", false},
	}
	for _, c := range cases {
		if c.d.String() != c.s || c.d.Valid() != c.valid {
			t.Errorf("Direction %d: String %q Valid %v, want %q %v", uint8(c.d), c.d.String(), c.d.Valid(), c.s, c.valid)
		}
	}
}
