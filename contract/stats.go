package contract

import (
	"fmt"
	"strconv"
	"strings"
)

// String reads as one line: the attempts, the rows by final status (those
// with none left out) in all and per direction, the calls in flight and
// unprovable, what is still lent, the oldest call and any violation, e.g.
//
//	attempts 12 (1 open); rows 96 ready, 3 miss, 1 fault (publish: 48 ready; fetch: 48 ready, 3 miss, 1 fault); calls 1 in flight, 0 unprovable; lent 4 rows, 1.0 MiB; oldest call 2ms
func (s Stats) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "attempts %d (%d open); rows %s", s.Attempts, s.AttemptsOpen, statusCounts(&s.Rows))
	if s.Rows != s.PublishRows && s.Rows != s.FetchRows {
		fmt.Fprintf(&b, " (publish: %s; fetch: %s)", statusCounts(&s.PublishRows), statusCounts(&s.FetchRows))
	} else if s.Rows == s.PublishRows && s.Rows != [RowStatusCount]int64{} {
		b.WriteString(" (all published)")
	} else if s.Rows == s.FetchRows && s.Rows != [RowStatusCount]int64{} {
		b.WriteString(" (all fetched)")
	}
	fmt.Fprintf(&b, "; calls %d in flight, %d unprovable; lent %d rows, %s", s.CallsInFlight, s.CallsUnprovable, s.RowsLent, byteSize(s.BytesLent))
	if s.Lookups > 0 {
		fmt.Fprintf(&b, "; lookups %d (%d names asked, %d present)", s.Lookups, s.LookupNames, s.LookupPresent)
	}
	if s.Reclaims > 0 {
		fmt.Fprintf(&b, "; reclaims %d (%d calls, %s given back)", s.Reclaims, s.CallsReclaimed, byteSize(s.BytesReclaimed))
	}
	if s.OldestCall > 0 {
		fmt.Fprintf(&b, "; oldest call %v", s.OldestCall)
	}
	if s.Violation != "" {
		fmt.Fprintf(&b, "; violation: %s", s.Violation)
	}
	return b.String()
}

// statusCounts lists the non-zero counts, "96 ready, 3 miss", or "none".
func statusCounts(rows *[RowStatusCount]int64) string {
	var parts []string
	for st := Ready; st < RowStatusCount; st++ {
		if n := rows[st]; n != 0 {
			parts = append(parts, strconv.FormatInt(n, 10)+" "+st.String())
		}
	}
	if len(parts) == 0 {
		return "none"
	}
	return strings.Join(parts, ", ")
}

// byteSize writes n bytes in binary units: "0 B", "512 B", "1.0 MiB".
func byteSize(n int64) string {
	const unit = 1024
	if n < unit && n > -unit {
		return strconv.FormatInt(n, 10) + " B"
	}
	div, exp := int64(unit), 0
	for m := n / unit; m >= unit || m <= -unit; m /= unit {
		div *= unit
		exp++
	}
	return fmt.Sprintf("%.1f %ciB", float64(n)/float64(div), "KMGTPE"[exp])
}
