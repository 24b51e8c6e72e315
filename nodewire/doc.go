// Package nodewire is the kvshare node's wire protocol: the frames an
// engine and the node exchange over a Unix stream socket, their codec,
// the frame connection that passes a lend's memfd, and the table of
// error codes. PROTOCOL.md, beside this file, is the protocol byte for
// byte; testdata/vectors.json holds encoded frames to check a client
// against.
//
// A frame is a 16-byte [Header] (body length, [Type], flags, request id)
// and a body. Each message is a struct that implements [Message]:
// [Hello] and [Welcome] open a session; [Lend] passes a memfd and [Lent]
// answers it; a [Transfer] (publish or fetch) is answered [Accepted],
// then [Outcome], then [Quiesced] — or [Refused]; [Lookup] is answered
// [Presence]; [Return] is answered [Returned] or [Held]; [Cancel] has no
// reply; [ClientGoodbye] and [NodeGoodbye] end a session.
//
// [Decode] and [DecodeFrame] check a frame's structure and name the
// field that was wrong in a *[FrameError]; [AppendFrame] encodes one.
// The encoding is canonical: a frame that decodes encodes back to the
// same bytes.
//
// [Conn] reads and writes frames on a *net.UnixConn. A lend carries one
// fd by SCM_RIGHTS; an fd on any other frame, or more than one, is a
// protocol error and every fd received with it is closed.
//
// Every error of the protocol has a [Code] and a sentinel (ErrProtocol,
// ErrBadLend, …): errors.Is matches a [RefusedError] or a [FrameError]
// to its code's sentinel, and [CodeOf] finds the code of any error.
//
// A lend's regions start every [Stride] bytes: slot bytes × slot count
// rounded up to 4096. An engine may reuse a slot only after its
// attempt's Quiesced or its lend's Returned (PROTOCOL.md, section 7).
package nodewire
