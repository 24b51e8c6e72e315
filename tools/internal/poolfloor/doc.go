// Package poolfloor is the raw loop kvshare's Mooncake measurements
// compare with: the SDK calls the Mooncake driver must make for a set
// of rows (a batch_put_from and the batch_is_exist that confirms its 0s
// for a put part, a batch_get_into for a get part), made straight on a
// client of the pool by a fixed number of bare goroutines, with keys,
// buffers and result slices built before the clock starts, and nothing
// of kvshare between.
//
// [Prepare] cuts rows as kvshare cuts them (views, then parts of at most
// a call's rows and bytes); a [Loop] runs a [Submission]'s parts; a
// [Shape] says what a floor of the same shape as a job is and refuses
// one out of range; [Remove] removes what a floor stored. Package bench
// measures with it, and so does the main job's --floor.
package poolfloor
