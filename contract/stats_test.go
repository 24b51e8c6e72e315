package contract_test

import (
	"testing"
	"time"

	"github.com/kvshare/kvshare/contract"
)

func TestStatsString(t *testing.T) {
	var s contract.Stats
	if got, want := s.String(), "attempts 0 (0 open); rows none; calls 0 in flight, 0 unprovable; lent 0 rows, 0 B"; got != want {
		t.Errorf("zero Stats:\n got %s\nwant %s", got, want)
	}
	s = contract.Stats{Attempts: 12, AttemptsOpen: 1, CallsInFlight: 1, RowsLent: 4, BytesLent: 1 << 20, OldestCall: 2 * time.Millisecond}
	s.PublishRows[contract.Ready] = 48
	s.FetchRows[contract.Ready], s.FetchRows[contract.Miss], s.FetchRows[contract.Fault] = 48, 3, 1
	for st := contract.Ready; st < contract.RowStatusCount; st++ {
		s.Rows[st] = s.PublishRows[st] + s.FetchRows[st]
	}
	want := "attempts 12 (1 open); rows 96 ready, 3 miss, 1 fault (publish: 48 ready; fetch: 48 ready, 3 miss, 1 fault); calls 1 in flight, 0 unprovable; lent 4 rows, 1.0 MiB; oldest call 2ms"
	if got := s.String(); got != want {
		t.Errorf("\n got %s\nwant %s", got, want)
	}
	s.PublishRows = [contract.RowStatusCount]int64{}
	s.Rows = s.FetchRows
	s.Violation = "Poll panicked"
	s.CallsUnprovable, s.BytesLent = 1, 3<<30+512<<20
	want = "attempts 12 (1 open); rows 48 ready, 3 miss, 1 fault (all fetched); calls 1 in flight, 1 unprovable; lent 4 rows, 3.5 GiB; oldest call 2ms; violation: Poll panicked"
	if got := s.String(); got != want {
		t.Errorf("\n got %s\nwant %s", got, want)
	}
}
