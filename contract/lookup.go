package contract

import (
	"context"
	"fmt"
)

// Presence is a lookup's answer for one name: whether the store holds a
// complete object under its key, without lending any memory.
type Presence uint8

const (
	// Unknown: the store cannot tell or failed to answer, the lookup's
	// context ended before its answer came, or the name was not asked.
	Unknown Presence = iota
	// Present: a complete, readable object stands behind the key: a get
	// made now would read it whole. With Capabilities.PresenceFromIndex,
	// the store's index holds a whole object under the key, and a get
	// made now may still end Fault (see [Looker]).
	Present
	// Absent: no object has the key.
	Absent
	// InFlight: the store, or this driver, is writing the key: ask again
	// soon. Never for a key no one writes (see [Looker], rule 2).
	InFlight
)

var presenceNames = [...]string{"unknown", "present", "absent", "in-flight"}

// String returns the presence in lower case ("in-flight").
func (p Presence) String() string {
	if int(p) < len(presenceNames) {
		return presenceNames[p]
	}
	return fmt.Sprintf("Presence(%d)", uint8(p))
}

// LookupBatch is what one lookup asks about: names, made into keys by
// the batch's key maker exactly as a [RowBatch]'s are. A name is borrowed
// until Lookup returns; a driver that still uses one after (a call it
// abandoned at the deadline) uses its own copy.
type LookupBatch struct {
	Keys  KeyMaker
	Names [][]byte
	// Distinct says the caller has made sure no name is in Names twice
	// (the binding's backend cuts its calls at a repeated name, so it
	// sets it). A driver may then skip its own check for a repeated
	// name, and refuses everything else as before; without it the driver
	// checks. A caller that sets it over a repeated name may get answers
	// for that name: a lookup lends no memory, so nothing is at
	// risk but the answers (a driver may still refuse it).
	Distinct bool
}

// AppendKey appends the key of name i to dst.
func (b LookupBatch) AppendKey(dst []byte, i int) []byte { return b.Keys.AppendKey(dst, b.Names[i]) }

// Looker is an optional interface of a [Driver] that can say which names
// its store holds without lending memory. Find it by type assertion, like
// [RegionsTogether].
//
// Lookup appends one [Presence] per name, in batch order, to dst[:0] and
// returns it. It refuses a batch it cannot ask about (no key maker, an
// empty name, a name without a key, a name twice) and every batch after
// Drain (whatever Drain answered) or Close, with an error wrapping
// [ErrDriverRejected] and no call to the store. Otherwise it answers
// within ctx: what the store did not answer, because ctx ended first or
// the store failed the call, is Unknown, never Absent. The rules, which
// the conformance suite checks:
//
//  1. Never Present for an object a get could not read whole at that
//     moment: a key being written, a torn or short object, a key whose
//     put this driver left open unless the store proves the object whole.
//     With Capabilities.PresenceFromIndex the rule reads the store's
//     index: never Present unless the index holds a whole object under
//     the key (the same cases excluded). A get made then reads that
//     object whole or ends Fault (the index still lists a holder of the
//     data that stopped answering); it never reads a torn object or
//     another one, and never Misses an object nothing removed.
//  2. With Capabilities.LookupInFlight, every name being written reads
//     InFlight: by this driver (a put from its admission until its row
//     is final, a row no worker has taken yet included) or by another
//     writer. Without it such a name may read Absent, Unknown or
//     InFlight. InFlight is never answered for a name no one writes, and
//     a key this driver is putting is never Present before its put is
//     Ready.
//  3. A lookup lends no memory, so a call blocked in the store may be
//     abandoned at ctx's end; the driver states what an abandoned call
//     still owns and why that is safe. An abandoned call still uses the
//     store's client: Drain answers false while any lookup is inside the
//     store, and Close is refused until none is.
//  4. Lookup is safe for concurrent use with itself, Put, Get and Poll.
type Looker interface {
	Lookup(ctx context.Context, b LookupBatch, dst []Presence) ([]Presence, error)
}
