package redisdrv

import (
	"errors"
	"fmt"
	"io"

	"github.com/redis/rueidis"
)

// maxText bounds the text of a reply that is not a value (SET's OK,
// STRLEN's and EXISTS's integers, an error): anything longer is not a
// reply these commands give.
const maxText = 64

var errLongText = errors.New("redisdrv: a reply longer than any answer of the command")

// answer is one reply of a pipeline that is not a value: its text (a
// simple string or an integer, as the client writes them) or its error
// (rueidis.Nil for a nil reply, a *rueidis.RedisError for an error
// reply, anything else for a connection that failed).
type answer struct {
	text string
	n    int64 // get: the bytes written into the slot
	err  error
}

// String says what the server answered, for the logs.
func (a answer) String() string {
	switch {
	case rueidis.IsRedisNil(a.err):
		return "nil"
	case a.err != nil:
		return a.err.Error()
	case a.text != "":
		return a.text
	}
	return fmt.Sprintf("%d bytes", a.n)
}

// reply reads the replies of a pipeline that are not values into a
// small buffer it reuses.
type reply struct {
	buf [maxText]byte
	n   int
}

// read reads the stream's next reply.
func (r *reply) read(s *rueidis.MultiRedisResultStream) answer {
	r.n = 0
	_, err := s.WriteTo(r)
	return answer{text: string(r.buf[:r.n]), err: err}
}

// Write takes a reply's text, at most maxText bytes of it.
func (r *reply) Write(b []byte) (int, error) {
	if r.n+len(b) > maxText {
		return 0, errLongText
	}
	r.n += copy(r.buf[r.n:], b)
	return len(b), nil
}

// ReadFrom takes a bulk string reply's bytes (the client hands them as a
// reader), at most maxText of them, reading none of a longer one.
func (r *reply) ReadFrom(src io.Reader) (int64, error) {
	lr, ok := src.(*io.LimitedReader)
	if !ok || int64(r.n)+lr.N > maxText {
		return 0, errLongText
	}
	n, err := io.ReadFull(lr, r.buf[r.n:r.n+int(lr.N)])
	r.n += n
	return int64(n), err
}
