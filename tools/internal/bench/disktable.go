package bench

import (
	"fmt"
	"io"
)

func writeDisk(w io.Writer, d *diskReport) {
	fmt.Fprintf(w, "\n9. The disk tier: kvshare over a diskdrv driver in %s;\n", d.Where)
	fmt.Fprintf(w, "   keys under %s/v1/…; the floor's files in %s.\n", d.KeyPrefix, d.FloorAt)
	fmt.Fprintf(w, "   Direct I/O %s; kvshare's rows moved: %d direct, %d through the page cache.\n", d.DirectIO, d.DirectRows, d.CachedRows)
	fmt.Fprintf(w, "   %d workers, %d rows a store call, views of %d rows, about %s each way a round; MB/s = 10⁶ B/s of Ready rows.\n",
		d.Workers, d.RowsPerCall, d.ViewRows, size(d.BytesPerRound))
	fmt.Fprintln(w, "   The floor: per row open + one pwrite (publish) or open + one pread (fetch) of the same bytes from the same memory, one file a row,")
	fmt.Fprintln(w, "   the driver's flags and syncs, as many goroutines as workers. Before every fetch the page cache of every file read (the driver's")
	fmt.Fprintln(w, "   and the floor's) is dropped with posix_fadvise(POSIX_FADV_DONTNEED), outside the clock.")
	t := table(w)
	fmt.Fprintln(t, "   row\trows\tkvshare publish\tfetch\tfloor publish\tfetch\tpublish ratio\tfetch ratio\tnot Ready kvshare/floor\t")
	for _, c := range d.Cases {
		fmt.Fprintf(t, "   %s\t%d\t%.0f MB/s\t%.0f\t%.0f\t%.0f\t%s\t%s\t%d/%d\t\n", size(c.RowBytes), c.Rows,
			c.KvsharePutMBs.Median, c.KvshareGetMBs.Median, c.FloorPutMBs.Median, c.FloorGetMBs.Median,
			sp(c.PutRatio, "%.3f"), sp(c.GetRatio, "%.3f"), c.KvshareNotReady, c.FloorNotReady)
	}
	t.Flush()
	if len(d.Lookup) == 0 {
		return
	}
	fmt.Fprintf(w, "   Lookup: Backend.Lookup (the driver answers from its index in memory) against a stat of each asked name's object file,\n")
	fmt.Fprintf(w, "   the paths found before the clock; one lookup at a time, blocks of about %g ms; the layout is measurement 6's.\n", d.LookupBlockMs)
	t = table(w)
	fmt.Fprintln(t, "   names\tmode\tasked\tpresent\tlookups/block\tkvshare ns/name asked\tstat's\tkvshare µs/lookup\tstat's\tratio\t")
	for _, c := range d.Lookup {
		fmt.Fprintf(t, "   %d\t%s\t%d\t%d\t%d\t%s\t%.1f\t%.1f\t%.1f\t%s\t\n", c.Names, c.Mode, c.Asked, c.Present, c.Lookups,
			sp(c.KvshareNsPerName, "%.1f"), c.FloorNsPerName.Median, c.KvshareNsPerName.Median*float64(c.Asked)/1e3,
			c.FloorNsPerName.Median*float64(c.Asked)/1e3, sp(c.Ratio, "%.3f"))
	}
	t.Flush()
}
