package node

import (
	"fmt"

	"github.com/kvshare/kvshare/nodewire"
)

// refusal is a request the node refuses: the code of the protocol's
// table, the field at fault (as the protocol names it: "lend.fd",
// "publish.groups[2].slots[7]") and what was wrong with it. The engine
// gets it as a refused frame; the connection goes on.
type refusal struct {
	code       nodewire.Code
	field      string
	message    string
	reclaiming bool // refused because a reclaim ran (counted apart)
}

func (r *refusal) Error() string {
	return fmt.Sprintf("%v: %s: %s", r.code, r.field, r.message)
}

// Unwrap returns the code's sentinel (nodewire.ErrBadLend, …).
func (r *refusal) Unwrap() error { return r.code.Err() }

// frame is the refused frame that tells the engine.
func (r *refusal) frame() nodewire.Message {
	return &nodewire.Refused{Code: r.code, Field: r.field, Message: r.message}
}

func refuse(code nodewire.Code, field, format string, args ...any) *refusal {
	return &refusal{code: code, field: field, message: fmt.Sprintf(format, args...)}
}
