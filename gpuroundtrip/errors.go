package gpuroundtrip

import (
	"errors"

	"github.com/kvshare/kvshare/gpuroundtrip/cudart"
)

// ErrConfig is wrapped by every refusal of a [Config] or [LenderConfig];
// the error names the field.
var ErrConfig = errors.New("gpuroundtrip: bad config")

// ErrKept is wrapped when memory could not be given back because a store
// may still touch it: it is kept (never freed) and the error says what
// is held.
var ErrKept = errors.New("gpuroundtrip: memory kept")

// ErrLenderClosed is returned by [Lender.Lend] once Close has begun.
var ErrLenderClosed = errors.New("gpuroundtrip: lender closed")

func isNoDevice(err error) bool { return errors.Is(err, cudart.ErrNoDevice) }
