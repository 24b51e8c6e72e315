// Package storefile says which store a store file is for: a Mooncake
// pool (a [mooncake] section), a Redis server (a [redis] section) or the
// embedded in-memory store (a [memory] section and no other store's).
// Every kvshare command that takes --store reads the file's kind here
// first and then hands the file to that store's own parser, which checks
// every key.
//
// [Read] and [Parse] return the [Kind]. They refuse, with an error
// wrapping [ErrKind] that names the file, a file that cannot be read
// (one that is not there leads with that and wraps fs.ErrNotExist), is
// not TOML, or holds no store section (naming the sections it holds
// that no store file takes, and the store section each is likely
// misspelt for) or two: a store file is for one store. They check
// nothing else; the store's parser does. [Node] reads
// the file's [node] section (how `kvshare node` serves the store), ahead
// of the store's parser.
package storefile
