package contract

import "fmt"

// Direction is the way a row moves: a put (slot to store) or a get
// (store to slot). The zero value is no direction.
type Direction uint8

const (
	// PutDir is a put: the slot is read and the store written.
	PutDir Direction = iota + 1
	// GetDir is a get: the store is read and the slot written.
	GetDir
)

// String returns "put", "get" or "Direction(n)".
func (d Direction) String() string {
	switch d {
	case PutDir:
		return "put"
	case GetDir:
		return "get"
	}
	return fmt.Sprintf("Direction(%d)", uint8(d))
}

// Valid reports whether d is PutDir or GetDir.
func (d Direction) Valid() bool { return d == PutDir || d == GetDir }
