package mooncakesdk

import (
	"fmt"
	"strings"
)

// CheckTransfer checks the arguments of a BatchPutFrom or BatchGetInto
// call the way every [Client] does before touching the store: the four
// slices have one length, no key is empty or holds a NUL byte, and no
// buffer address is 0 for a non-empty size. The error wraps
// [ErrInvalidArgument] and names the first bad index.
func CheckTransfer(keys []string, bufs []uintptr, sizes []uint64, results []int64) error {
	if err := checkLengths(len(keys), bufs, sizes, results); err != nil {
		return err
	}
	for i, k := range keys {
		if err := checkKey(i, k); err != nil {
			return err
		}
		if bufs[i] == 0 && sizes[i] > 0 {
			return fmt.Errorf("%w: key %d (%q): buffer address 0 for %d bytes", ErrInvalidArgument, i, k, sizes[i])
		}
	}
	return nil
}

// CheckTransferList is [CheckTransfer] for a [KeyList], whose keys are
// well-formed by construction: the four lengths agree and no buffer
// address is 0 for a non-empty size.
func CheckTransferList(keys *KeyList, bufs []uintptr, sizes []uint64, results []int64) error {
	if err := checkLengths(keys.Len(), bufs, sizes, results); err != nil {
		return err
	}
	for i := range bufs {
		if bufs[i] == 0 && sizes[i] > 0 {
			return fmt.Errorf("%w: key %d (%q): buffer address 0 for %d bytes", ErrInvalidArgument, i, keys.Key(i), sizes[i])
		}
	}
	return nil
}

// CheckExist checks the arguments of a BatchIsExist call the way every
// [Client] does: one result per key, no key empty or holding a NUL byte.
func CheckExist(keys []string, results []int32) error {
	if len(results) != len(keys) {
		return fmt.Errorf("%w: %d keys, %d results", ErrInvalidArgument, len(keys), len(results))
	}
	for i, k := range keys {
		if err := checkKey(i, k); err != nil {
			return err
		}
	}
	return nil
}

// CheckExistList is [CheckExist] for a [KeyList]: one result per key.
func CheckExistList(keys *KeyList, results []int32) error {
	if len(results) != keys.Len() {
		return fmt.Errorf("%w: %d keys, %d results", ErrInvalidArgument, keys.Len(), len(results))
	}
	return nil
}

func checkLengths(n int, bufs []uintptr, sizes []uint64, results []int64) error {
	if len(bufs) != n || len(sizes) != n || len(results) != n {
		return fmt.Errorf("%w: %d keys, %d buffers, %d sizes, %d results", ErrInvalidArgument, n, len(bufs), len(sizes), len(results))
	}
	return nil
}

func checkKey(i int, k string) error {
	if k == "" {
		return fmt.Errorf("%w: key %d is empty", ErrInvalidArgument, i)
	}
	if strings.IndexByte(k, 0) >= 0 {
		return fmt.Errorf("%w: key %d (%q) holds a NUL byte", ErrInvalidArgument, i, k)
	}
	return nil
}

// PackKeys resets l and packs keys into it, refusing an empty key or
// one holding a NUL byte as [KeyList.Append] does. The string-keyed
// batch calls of every [Client] are this and the KeyList call.
func PackKeys(l *KeyList, keys []string) error {
	l.Reset()
	for _, k := range keys {
		if err := l.Append(k); err != nil {
			l.Reset()
			return err
		}
	}
	return nil
}
