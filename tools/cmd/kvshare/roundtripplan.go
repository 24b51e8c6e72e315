package main

import (
	"bytes"
	"io"

	"github.com/kvshare/kvshare/binding"
	"github.com/kvshare/kvshare/contract"
)

// lenders is the number of lenders a round trip opens: the publisher
// and the fetcher.
const lenders = 2

// plan holds the lines that say what a round trip is about (the store,
// the rows, a metrics endpoint) until the run has started, and then
// writes them to out: a run that never starts, its store's driver or
// its lenders' memory refused, prints its error alone, nothing that
// reads like a result.
type plan struct {
	bytes.Buffer
	out  io.Writer
	said bool
}

// say writes the lines held to out, once.
func (p *plan) say() {
	if !p.said {
		p.said = true
		_, _ = p.out.Write(p.Bytes())
	}
}

// sayOnceOpen returns a round trip's Observe that says the plan once
// every lender is open, and then observes each lender as observe does
// (nil: not at all).
func (p *plan) sayOnceOpen(observe func(string, *binding.Backend, contract.Driver) func()) func(string, *binding.Backend, contract.Driver) func() {
	open := 0
	return func(lender string, b *binding.Backend, d contract.Driver) func() {
		if open++; open == lenders {
			p.say()
		}
		if observe == nil {
			return nil
		}
		return observe(lender, b, d)
	}
}
