// Package consumer checks that kvshare can be taken from outside, the
// way a team takes any multi-module repository: by version, through a
// module proxy, with no replace.
//
// [Check] publishes every module with [release.Dist] into a temporary
// proxy, copies each consumer of [modules.Repo] to a temporary
// folder and there, with a throwaway module cache (so a version cached
// earlier can never stand in for the code under test), runs
// `go mod tidy`, `go mod vendor`, `go vet`, `go build` and the program
// itself. It fails when a consumer's go.mod has a replace or requires
// kvshare at another version than the proxy's, when its
// vendor/modules.txt lists a module it must not pull in, or when the
// program does not report every byte round-tripped.
//
// A consumer that needs a server (its Server in build/modules) runs
// against one the check starts on loopback and stops after: for Redis, a
// redis-server from KVSHARE_REDIS_SERVER, else from PATH, its address
// passed to the program as KVSHARE_REDIS_ADDR. With no redis-server on
// the machine the consumer is built but not run, and one line says so;
// a KVSHARE_REDIS_SERVER that cannot be used fails the check.
package consumer
