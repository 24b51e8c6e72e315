package redisdrv

import (
	"strconv"
	"strings"

	"github.com/redis/rueidis"

	"github.com/kvshare/kvshare/contract"
)

// putVerdict maps a row's SET key value NX and STRLEN key replies (the
// verdict table of docs/design/redisdrv.md): OK is Ready (a
// Redis value is whole the moment it exists); nil (the key holds a
// value already) is Ready when that value has the row's length, NotReady
// when it vanished before STRLEN looked (length 0), Fault for any other
// length; an out-of-memory refusal is Declined; anything else Fault.
func putVerdict(set, strlen answer, rowLen int64) contract.RowStatus {
	switch {
	case set.err == nil && set.text == "OK":
		return contract.Ready
	case rueidis.IsRedisNil(set.err):
		if strlen.err != nil {
			return contract.Fault
		}
		n, err := strconv.ParseInt(strlen.text, 10, 64)
		switch {
		case err != nil:
			return contract.Fault
		case n == rowLen:
			return contract.Ready
		case n == 0:
			return contract.NotReady
		}
		return contract.Fault
	case isOutOfMemory(set.err):
		return contract.Declined
	}
	return contract.Fault
}

// isOutOfMemory reports whether err is the server's refusal of a write
// at its maxmemory (policy noeviction, or nothing left to evict).
func isOutOfMemory(err error) bool {
	re, ok := rueidis.IsRedisErr(err)
	return ok && strings.HasPrefix(re.Error(), "OOM ")
}

// getVerdict maps a row's GET as the slotWriter saw it: a value of the
// row's length is Ready; nil (no such key) is Miss; a shorter value
// (its head written), a longer one (nothing written), an error reply or
// a failed connection are Fault.
func getVerdict(w *slotWriter, err error) contract.RowStatus {
	switch {
	case err == nil && w.whole():
		return contract.Ready
	case rueidis.IsRedisNil(err) && w.written == 0:
		return contract.Miss
	}
	return contract.Fault
}
