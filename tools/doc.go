// Module tools holds kvshare's commands: cmd/kvshare (the kvshare
// command) and the jobs behind it (roundtrip). It may import every other
// module of the workspace.
package tools
