// Package tier runs kvshare's opt-in test tiers, those that need
// something the machine may not have (a real Mooncake pool, a redis-server):
// every test binary of the tier's packages is built first, then run one
// at a time under test2json, inside a private network namespace with
// only loopback when the machine allows it. Failures are shown in full,
// passes and skips counted; a test that skips as if the tier were off,
// or a binary that runs no test, fails the tier — once asked for, a tier
// runs or fails, it never passes by skipping.
//
// [Realpool] is `go run mage.go realpool`, [Redis] `go run mage.go redis`.
package tier
