package mooncakesdk

import (
	"bytes"
	"fmt"
)

// KeyList is one batch call's keys packed as the C ABI takes them: each
// key's bytes followed by a NUL byte, in one buffer, plus where each key
// starts. The zero KeyList is empty and ready; Reset reuses its memory.
//
// A driver writes keys straight into the buffer, one pass, no Go
// strings:
//
//	kl.Reset()
//	for i := range n {
//		if err := kl.Add(appendKey(kl.Tail(), i)); err != nil {
//			return err
//		}
//	}
//
// Once the buffer has grown to a batch's size, filling it again
// allocates nothing. Every key in a KeyList is non-empty and free of NUL
// bytes: Add and Append refuse any other. A KeyList is not safe for
// concurrent use, and must not change while a call that was given it
// runs. A nil *KeyList reads as empty.
type KeyList struct {
	buf  []byte // every key followed by its NUL
	offs []int  // where key i starts in buf
}

// Reset empties the list and keeps its memory for the next keys.
func (l *KeyList) Reset() {
	l.buf = l.buf[:0]
	l.offs = l.offs[:0]
}

// Len is the number of keys.
func (l *KeyList) Len() int {
	if l == nil {
		return 0
	}
	return len(l.offs)
}

// Key is key i without its NUL. It aliases the list's buffer: it is
// valid until the next Reset, and the caller does not change it.
func (l *KeyList) Key(i int) []byte {
	end := len(l.buf)
	if i+1 < len(l.offs) {
		end = l.offs[i+1]
	}
	return l.buf[l.offs[i] : end-1 : end-1]
}

// Tail is the buffer to append the next key's bytes to, then give to
// Add: the packed keys so far, with their spare capacity.
func (l *KeyList) Tail() []byte { return l.buf }

// Add records the key that buf holds past [KeyList.Tail] (buf is
// Tail() with the next key's bytes appended; appending may have moved
// it to a larger array, which the list then adopts) and appends its
// NUL. It refuses, with [ErrInvalidArgument] naming the key's index, a
// buf no longer than Tail() (an empty key, or a buf that does not extend
// Tail) and a key holding a NUL byte. On error the list is unchanged.
func (l *KeyList) Add(buf []byte) error {
	i, start := len(l.offs), len(l.buf)
	if len(buf) <= start {
		return fmt.Errorf("%w: key %d is empty (the buffer holds %d bytes, not more than the %d already packed)", ErrInvalidArgument, i, len(buf), start)
	}
	if bytes.IndexByte(buf[start:], 0) >= 0 {
		return fmt.Errorf("%w: key %d (%q) holds a NUL byte", ErrInvalidArgument, i, buf[start:])
	}
	l.buf = append(buf, 0)
	l.offs = append(l.offs, start)
	return nil
}

// Append copies key into the list: a convenience for keys that already
// are strings. It refuses what Add refuses.
func (l *KeyList) Append(key string) error {
	if key == "" {
		return fmt.Errorf("%w: key %d is empty", ErrInvalidArgument, len(l.offs))
	}
	return l.Add(append(l.buf, key...))
}
