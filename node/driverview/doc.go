// Package driverview gives each lend of the kvshare node a driver of its
// own over the node's one shared store driver: a [View] is a
// [contract.Driver] that passes Register, Unregister, Put, Get, Poll,
// Cancel and Lookup through to the shared driver, keeps the rules of
// package contract for its own work, and never lets one view's Drain or
// Close touch another view's work. It imports only contract.
//
// A view counts what is its own: the regions registered through it, its
// operations (their access end learned from the shared driver's onChange,
// which the view wraps) and its lookups inside the store. Its Put and Get
// refuse a span outside the regions registered through it, so one lend's
// calls never reach another lend's memory. Drain refuses the view's later
// work, cancels its own operations' rows no worker took and waits within
// its context for its own operations and lookups only; it never calls the
// shared driver's Drain. Close never closes the shared driver: it is
// refused unless a Drain of the view answered true and every registration
// made through it is revoked, and then it only closes the view.
//
// [View.Driver] is the view as a driver with exactly the optional
// interfaces the shared driver has ([contract.Looker],
// [contract.RegionsTogether], [contract.Recycler]). A view's Recycle
// recycles the shared client: every view's queued rows end Cancelled,
// every view's calls are refused while it runs, and every view's
// Unprovable operations end, since the store client they ran on is torn
// down. It is how the node wins back memory an engine's unprovable calls
// hold (binding's Reclaim through that engine's view), at the price of
// disturbing the calls other engines have in flight. Views made by one
// [Shared] share its ledger of recycles: [Shared.Recycle] recycles the
// client once for all of them, and a view's own Recycle afterwards
// answers as that recycle did, without recycling again, while nothing was
// admitted through the view since it started.
//
// The owner of the shared driver closes it, last, once every view over it
// is closed. Why: docs/design/node.md (section "One store client, a
// view per lend").
package driverview
