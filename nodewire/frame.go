package nodewire

import (
	"encoding/binary"
	"fmt"
	"math"
)

// AppendFrame appends a whole frame, header and body, of m to dst, with
// request id request. It fails for a message of a type version 1 does
// not define (a Transfer without a direction) and for a body over 4 GiB.
// It does not check the request id against the type: [Header.Check] is
// the receiver's.
func AppendFrame(dst []byte, request uint64, m Message) ([]byte, error) {
	t := m.Type()
	if !t.Known() {
		return dst, fmt.Errorf("nodewire: encode: %v: not a message of version %d", t, Version)
	}
	start := len(dst)
	dst = Header{Type: t, Request: request}.Append(dst)
	dst = m.AppendBody(dst)
	n := len(dst) - start - HeaderSize
	if uint64(n) > math.MaxUint32 {
		return dst[:start], fmt.Errorf("nodewire: encode: %v: body of %d bytes over 4 GiB", t, n)
	}
	binary.LittleEndian.PutUint32(dst[start:], uint32(n))
	return dst, nil
}

// DecodeFrame decodes one whole frame: its header, checked against
// maxBody as [ParseHeader] does, then a body of exactly the header's
// length, decoded by [Decode]. The header is returned even with an error.
func DecodeFrame(frame []byte, maxBody uint32) (Header, Message, error) {
	h, err := ParseHeader(frame, maxBody)
	if err != nil {
		return h, nil, err
	}
	body := frame[HeaderSize:]
	if uint64(len(body)) != uint64(h.Len) {
		return h, nil, frameErr(CodeProtocol, "header: body_len", fmt.Sprintf("%d, but %d bytes follow the header", h.Len, len(body)))
	}
	m, err := Decode(h, body)
	return h, m, err
}
