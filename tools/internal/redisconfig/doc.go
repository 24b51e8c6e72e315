// Package redisconfig writes the store file a user would write for a
// loopback redis-server started with package redistest of redisdrv: for
// the --redis-server (and --redis-cluster) flags of the kvshare commands
// and for the Redis tests of the tools module.
//
// [Text] is the file's text; [Start] starts a server from a redis-server
// binary, writes its file into a temporary folder and returns a stop
// function that stops the server and removes the folder; [ForTest] does
// the same for a test (skipping it when the Redis tier is off).
// [ClusterText], [StartCluster] and [ClusterForTest] do the same for a
// three-node Redis Cluster (--redis-cluster): [redis] cluster = true,
// every node's address a seed, each node's maxmemory and policy the
// doctor's expectations. Every server listens on 127.0.0.1 only, keeps
// nothing on disk, and is a child of this process that dies with it.
package redisconfig
