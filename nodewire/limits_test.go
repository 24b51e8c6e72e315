package nodewire

import (
	"math"
	"strings"
	"testing"

	"github.com/kvshare/kvshare/contract"
	"github.com/stretchr/testify/assert"
)

// TestNodeBodyLimit: the largest frame of each type the node sends fits
// the limit, and the largest refused meets it exactly.
func TestNodeBodyLimit(t *testing.T) {
	full := strings.Repeat("x", math.MaxUint16)
	const maxRows = 4096
	limit := int(NodeBodyLimit(maxRows))
	largest := []Message{
		&Welcome{},
		&Lent{},
		&Accepted{}, &Quiesced{}, &Returned{}, &Held{},
		&Outcome{Rows: make([]contract.RowStatus, maxRows), FaultCode: CodeStore, Fault: full},
		&Presence{Rows: make([]contract.Presence, maxRows)},
		&StatsReply{},
		&NodeGoodbye{Code: CodeProtocol, Reason: full},
	}
	for _, m := range largest {
		assert.LessOrEqual(t, len(m.AppendBody(nil)), limit, "%v", m.Type())
	}
	refused := &Refused{Code: CodeStore, Field: full, Message: full}
	assert.Equal(t, int(NodeBodyLimit(0)), len(refused.AppendBody(nil)))
	assert.Equal(t, uint32(math.MaxUint32), NodeBodyLimit(math.MaxUint32))
}
