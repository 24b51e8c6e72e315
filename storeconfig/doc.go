// Package storeconfig is the part of a kvshare store file that every
// store shares: the [blob] section's settings ([Blob]), their documented
// default key prefix ([DefaultKeyPrefix]) and their validation, the
// [memory] section's settings of the embedded in-memory store
// ([Memory]: a bounded cache taken up front) and theirs, the [node]
// section's ([Node]: the socket, who may attach and the limits of
// `kvshare node`) and theirs, the [scope] section's ([ScopeSection]: the
// keys.Scope every key is made under, carried in [Blob]), and the error
// every refusal of a store file is ([*Error], matching [ErrConfig]).
//
// A store file is TOML: [blob] plus one section for the store
// ([mooncake], [redis], or [memory] for the embedded store), and
// optionally [node] and [scope], each
// decoded strictly by package tomlfile (an unknown section or key, a
// wrong type or a value out of range is refused, with the file, section
// and key named). This package itself
// imports only keys; so a backend (package binding) can take its
// settings without pulling in a TOML decoder. binding.FromBlob turns a
// Blob into the backend's Config.
package storeconfig
