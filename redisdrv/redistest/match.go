package redistest

import (
	"bytes"
	"slices"
	"strings"
)

// A Match chooses commands for the proxy's rules. cmd[0] is the command
// name as the client sent it (compare it case-insensitively), cmd[1:] its
// arguments: key arguments (KeyArgs) whole, every other one cut to its
// first MatchValueBytes bytes. A Match runs on
// the proxy's goroutines while traffic flows: it must be safe for
// concurrent use, quick, and must not call the Proxy's methods.
type Match func(cmd [][]byte) bool

// MatchValueBytes is how much of each argument that is not a key the
// proxy keeps for its rules and for Seen: the start of a value, the whole
// of a flag such as NX or EX.
const MatchValueBytes = 256

// Command matches commands named name, compared case-insensitively. With
// keys, only those that carry one of keys among their key arguments (see
// KeyArgs); without, every command of that name.
func Command(name string, keys ...string) Match {
	return func(cmd [][]byte) bool {
		if len(cmd) == 0 || !strings.EqualFold(string(cmd[0]), name) {
			return false
		}
		return len(keys) == 0 || carriesAny(cmd, keys)
	}
}

// Any matches every command.
func Any() Match { return func([][]byte) bool { return true } }

// allKeys are the commands every argument of which is a key.
var allKeys = []string{"DEL", "UNLINK", "EXISTS", "MGET", "TOUCH", "WATCH"}

// pairKeys are the commands whose arguments are key, value pairs.
var pairKeys = []string{"MSET", "MSETNX"}

// KeyArgs returns the key arguments of cmd: every argument of DEL, UNLINK,
// EXISTS, MGET, TOUCH and WATCH; the first of each pair of MSET and
// MSETNX; argument 1 of any other command that has arguments (GET, SET,
// STRLEN, GETRANGE, SETRANGE, APPEND, EXPIRE, …).
func KeyArgs(cmd [][]byte) [][]byte {
	if len(cmd) < 2 {
		return nil
	}
	name := strings.ToUpper(string(cmd[0]))
	var ks [][]byte
	for i := 1; i < len(cmd); i++ {
		if isKeyArg(name, i) {
			ks = append(ks, cmd[i])
		}
	}
	return ks
}

// isKeyArg reports whether argument i (1 or more) of the command named
// name (upper case) is a key.
func isKeyArg(name string, i int) bool {
	switch {
	case slices.Contains(allKeys, name):
		return true
	case slices.Contains(pairKeys, name):
		return i%2 == 1
	}
	return i == 1
}

// carriesAny reports whether one of keys is among cmd's key arguments.
func carriesAny(cmd [][]byte, keys []string) bool {
	for _, k := range KeyArgs(cmd) {
		for _, want := range keys {
			if string(k) == want {
				return true
			}
		}
	}
	return false
}

// record is the copy of a command the proxy keeps: the name and the key
// arguments whole, every other argument cut to MatchValueBytes (copied,
// so the full value can be freed).
func record(args [][]byte) [][]byte {
	rec := make([][]byte, len(args))
	name := strings.ToUpper(string(args[0]))
	for i, a := range args {
		if i > 0 && len(a) > MatchValueBytes && !isKeyArg(name, i) {
			a = bytes.Clone(a[:MatchValueBytes])
		}
		rec[i] = a
	}
	return rec
}
