package nodewire

// Message is the body of a frame. Every message type of the protocol is
// a struct of this package that implements it; [Decode] returns one as a
// pointer (*Hello, *Transfer, …). AppendBody appends the body's bytes,
// without the header, to dst.
type Message interface {
	Type() Type
	AppendBody(dst []byte) []byte
}
