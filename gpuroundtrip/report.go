package gpuroundtrip

import "time"

// Phase is what one direction of the round trip moved: publish (pages to
// store) or fetch (store to pages).
type Phase struct {
	// Rows is the blocks submitted; Delivered those the outcome marks
	// delivered; Bytes their bytes.
	Rows      int
	Delivered int
	Bytes     int64
	// CopyBytes and Copy are the bytes copied between device pages and
	// staging slots, and the time; Store is submission to quiescence.
	CopyBytes int64
	Copy      time.Duration
	Store     time.Duration
	// Fault is the outcome's fault, if any: what stopped the attempt.
	Fault error
}

// GBps returns the delivered bytes over the copy and store time, in 10⁹
// bytes a second: the rate a request's KV moves from pages to store
// (publish) or store to pages (fetch).
func (p Phase) GBps() float64 { return rate(p.Bytes, p.Copy+p.Store) }

// CopyGBps returns the copy's rate alone (device to host on publish, host
// to device on fetch).
func (p Phase) CopyGBps() float64 { return rate(p.CopyBytes, p.Copy) }

// StoreGBps returns the store's rate alone.
func (p Phase) StoreGBps() float64 { return rate(p.Bytes, p.Store) }

func rate(n int64, d time.Duration) float64 {
	if d <= 0 {
		return 0
	}
	return float64(n) / d.Seconds() / 1e9
}

// Report is what a round trip moved and found.
type Report struct {
	Config Config
	// Device names the device the pages lived on; OnGPU says whether it
	// is a GPU; NoGPU says why the host stand-in ran instead ("" on a
	// GPU, or when the stand-in was asked for).
	Device string
	OnGPU  bool
	NoGPU  string
	// Store names the store; KeyPrefix is the run's key prefix.
	Store     string
	KeyPrefix string
	Publish   Phase
	Fetch     Phase
	// Prefixes holds each layer's fetched prefix and Bound the resume
	// bound: the leading blocks that arrived in every layer.
	Prefixes []int
	Bound    int
	// Mismatches counts pages below the bound whose bytes differ from
	// what was published; Overwritten pages at or past the bound that
	// the fetch changed (it must copy nothing there).
	Mismatches  int
	Overwritten int
	// Freed says both lenders gave everything back in the owner's
	// cleanup order.
	Freed bool
}

// OK reports whether every block went both ways intact and everything
// was given back.
func (r Report) OK() bool {
	rows := r.Config.Layers * r.Config.Blocks
	return r.Publish.Delivered == rows && r.Fetch.Delivered == rows && r.Bound == r.Config.Blocks &&
		r.Mismatches == 0 && r.Overwritten == 0 && r.Freed
}
