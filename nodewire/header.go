package nodewire

import (
	"encoding/binary"
	"fmt"
)

// HeaderSize is the size of a frame's header in bytes.
const HeaderSize = 16

// Header is a frame's fixed 16-byte header: the body's length in bytes
// (the header excluded), the message type, flags (none defined: every
// bit must be clear) and the request id.
//
// An engine's frames carry a non-zero request id of its choosing; the
// node's replies carry the id of the request they answer, and the node's
// goodbye, which answers nothing, carries 0.
type Header struct {
	Len     uint32
	Type    Type
	Flags   uint16
	Request uint64
}

// Append appends the header's 16 bytes to dst.
func (h Header) Append(dst []byte) []byte {
	dst = binary.LittleEndian.AppendUint32(dst, h.Len)
	dst = binary.LittleEndian.AppendUint16(dst, uint16(h.Type))
	dst = binary.LittleEndian.AppendUint16(dst, h.Flags)
	return binary.LittleEndian.AppendUint64(dst, h.Request)
}

// ParseHeader reads a header from the first [HeaderSize] bytes of b and
// checks it: a known type, no flag set, the request id the type calls
// for, and a body of at most maxBody bytes. An error is a *[FrameError]:
// ErrLimit for a body over maxBody, ErrProtocol for anything else. The
// header is returned even with an error, for the error's report.
func ParseHeader(b []byte, maxBody uint32) (Header, error) {
	if len(b) < HeaderSize {
		return Header{}, frameErr(CodeProtocol, "header", fmt.Sprintf("%d bytes, want %d", len(b), HeaderSize))
	}
	h := Header{
		Len:     binary.LittleEndian.Uint32(b[0:]),
		Type:    Type(binary.LittleEndian.Uint16(b[4:])),
		Flags:   binary.LittleEndian.Uint16(b[6:]),
		Request: binary.LittleEndian.Uint64(b[8:]),
	}
	return h, h.Check(maxBody)
}

// Check checks a header as [ParseHeader] does.
func (h Header) Check(maxBody uint32) error {
	switch {
	case !h.Type.Known():
		return frameErr(CodeProtocol, "header: type", fmt.Sprintf("unknown type 0x%04x", uint16(h.Type)))
	case h.Flags != 0:
		return frameErr(CodeProtocol, "header: flags", fmt.Sprintf("0x%04x set, none defined", h.Flags))
	case h.Type == TypeNodeGoodbye && h.Request != 0:
		return frameErr(CodeProtocol, "header: request", fmt.Sprintf("%d on a node-goodbye, want 0", h.Request))
	case h.Type != TypeNodeGoodbye && h.Request == 0:
		return frameErr(CodeProtocol, "header: request", "0 on a "+h.Type.String()+", want non-zero")
	case h.Len > maxBody:
		return frameErr(CodeLimitExceeded, "header: body_len", fmt.Sprintf("%d bytes over the limit of %d", h.Len, maxBody))
	}
	return nil
}
