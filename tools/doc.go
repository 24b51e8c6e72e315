// Module tools holds kvshare's commands: cmd/kvshare (the kvshare
// command) and the jobs behind it: roundtrip (the main job, through the
// embedded in-memory store or a Mooncake pool), doctor (checks a store
// config and the pool it names), runprefix (a key prefix per run, since
// a Mooncake put never overwrites). It may import every other module of
// the workspace.
package tools
