package nodewire

import (
	"errors"
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
)

// TestCodes: every code of the table has a name and its own sentinel,
// CodeOf finds the code again through wrapping, and codes outside the
// table map to ErrUnknownCode.
func TestCodes(t *testing.T) {
	sentinels := map[error]Code{}
	for c := Code(1); c.Known(); c++ {
		err := c.Err()
		assert.NotNil(t, err, "code %d", c)
		_, dup := sentinels[err]
		assert.False(t, dup, "code %d shares a sentinel", c)
		sentinels[err] = c
		assert.NotContains(t, c.String(), "code ", "code %d has no name", c)
		assert.Equal(t, c, CodeOf(fmt.Errorf("wrapped: %w", err)))
		assert.Equal(t, c, CodeOf(&RefusedError{Code: c}))
		assert.Equal(t, c, CodeOf(fmt.Errorf("wrapped: %w", &FrameError{Code: c, Field: "f", Reason: "r"})))
	}
	assert.Len(t, sentinels, 17, "version 1 defines codes 1 to 17")
	assert.Equal(t, ErrProtocol, CodeProtocol.Err())
	assert.Equal(t, ErrSlowReader, CodeSlowReader.Err())
	assert.Equal(t, "bad-lend", CodeBadLend.String())
	assert.Equal(t, "tenant-not-allowed", CodeTenantNotAllowed.String())
	assert.Equal(t, ErrTenantLimit, CodeTenantLimit.Err())

	assert.Nil(t, Code(0).Err())
	assert.Equal(t, "none", Code(0).String())
	assert.Equal(t, ErrUnknownCode, Code(18).Err())
	assert.Equal(t, "code 18", Code(18).String())
	assert.False(t, Code(18).Known())
	assert.Zero(t, CodeOf(nil))
	assert.Zero(t, CodeOf(errors.New("elsewhere")))
}

// TestRefusedError: a refusal reads as its code, field and message, and
// matches its code's sentinel and no other.
func TestRefusedError(t *testing.T) {
	m := &Refused{Code: CodeOutOfRange, Field: "publish.group[1].slots", Message: "slot 16 of 16"}
	err := fmt.Errorf("publish: %w", m.Err())
	assert.EqualError(t, err, "publish: nodewire: refused (out-of-range): publish.group[1].slots: slot 16 of 16")
	assert.ErrorIs(t, err, ErrOutOfRange)
	assert.NotErrorIs(t, err, ErrProtocol)
	assert.NotErrorIs(t, err, ErrUnknownCode)
	re, ok := errors.AsType[*RefusedError](err)
	assert.True(t, ok)
	assert.Equal(t, "publish.group[1].slots", re.Field)

	unknown := (&Refused{Code: 77, Message: "later"}).Err()
	assert.EqualError(t, unknown, "nodewire: refused (code 77): later")
	assert.ErrorIs(t, unknown, ErrUnknownCode)
	assert.Equal(t, Code(77), CodeOf(unknown))
}
