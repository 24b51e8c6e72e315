package broken

import (
	"errors"
	"fmt"
	"time"

	"github.com/kvshare/kvshare/contract"
	"github.com/kvshare/kvshare/memdrv"
)

// unprovableFor is how long after a Poll first reported an operation's
// access Unprovable UnprovableEndsLater starts reporting it Ended: long
// enough that the polls of the check that made it Unprovable, made at
// once, still see Unprovable, and well within any harness's Wait, which
// a thorough run waits out before it looks again.
const unprovableFor = time.Second

// endLater bends what Poll reports under UnprovableEndsLater: Ended once
// unprovableFor passed since a Poll first reported Unprovable. The
// caller holds o.mu.
func (o *operation) endLater(st *contract.OpState) {
	if st.Access != contract.Unprovable {
		return
	}
	switch {
	case o.unprovableSince.IsZero():
		o.unprovableSince = time.Now()
	case time.Since(o.unprovableSince) >= unprovableFor:
		st.Access = contract.Ended
	}
}

// cleanRefusal says what CleanRefusalWhenLive answers for a registration
// that failed with err: for a failure that may be live, the handle it
// carried (which the caller keeps, to revoke it itself) and an error
// wrapping ErrDriverRejected alone; otherwise 0 and err as it is.
func (d *Driver) cleanRefusal(err error) (live contract.Registration, answer error) {
	var re *contract.RegistrationError
	if d.rule != CleanRefusalWhenLive || !errors.As(err, &re) || !re.MayBeLive() {
		return 0, err
	}
	return re.Registration, fmt.Errorf("%w: broken: %s: the store did not register the memory: %v", contract.ErrDriverRejected, d.rule, re.Err)
}

// noteCrash records that a store call crashed (CapabilitiesChangeAfterCrash),
// and keeps memdrv's verdict.
func (d *Driver) noteCrash(e memdrv.RowEnd) contract.RowStatus {
	if e.Crashed {
		d.crashed.Store(true)
	}
	return e.Status
}
