package diskdrv

import (
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"hash/crc32"
	"path/filepath"
)

// An object is one file: a header page, then the payload.
//
//	offset 0     magic "kvsdisk1" (8 bytes)
//	offset 8     key length (uint32, little endian)
//	offset 12    reserved (uint32, zero)
//	offset 16    payload length (uint64)
//	offset 24    CRC-32C of bytes 0..23 and the key (uint32)
//	offset 28    the key
//	offset 4096  the payload
//
// The header takes one page so that the payload starts aligned for
// direct I/O. The file's name is the SHA-256 of the key in hex, under a
// folder named after its first byte: objects/ab/ab12…; a put writes
// objects/ab/ab12….tmp and renames it.
const (
	pageBytes   = 4096
	headerBytes = pageBytes
	headerFixed = 28
	// maxKeyBytes is the longest key a header page holds.
	maxKeyBytes = headerBytes - headerFixed
	objectsDir  = "objects"
	lockName    = "LOCK"
	tmpSuffix   = ".tmp"
)

var magic = [8]byte{'k', 'v', 's', 'd', 'i', 's', 'k', '1'}

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// errBadHeader is wrapped by every refusal of decodeHeader.
var errBadHeader = errors.New("diskdrv: not an object header")

// digest names key's file.
func digest(key string) string {
	sum := sha256.Sum256([]byte(key))
	return hex.EncodeToString(sum[:])
}

// objectPath is key's file under the store's directory.
func objectPath(dir, name string) string {
	return filepath.Join(dir, objectsDir, name[:2], name)
}

// encodeHeader writes key's header for a payload of size bytes into
// page (headerBytes long).
func encodeHeader(page []byte, key string, size int64) {
	clear(page[:headerBytes])
	copy(page, magic[:])
	binary.LittleEndian.PutUint32(page[8:], uint32(len(key)))
	binary.LittleEndian.PutUint64(page[16:], uint64(size))
	copy(page[headerFixed:], key)
	crc := crc32.Update(crc32.Checksum(page[:24], castagnoli), castagnoli, []byte(key))
	binary.LittleEndian.PutUint32(page[24:], crc)
}

// decodeHeader reads a header page: the key and the payload's length.
func decodeHeader(page []byte) (key string, size int64, err error) {
	if len(page) < headerBytes || [8]byte(page[:8]) != magic {
		return "", 0, fmt.Errorf("%w: no magic", errBadHeader)
	}
	n := binary.LittleEndian.Uint32(page[8:])
	if n > maxKeyBytes {
		return "", 0, fmt.Errorf("%w: a key of %d bytes", errBadHeader, n)
	}
	k := page[headerFixed : headerFixed+n]
	crc := crc32.Update(crc32.Checksum(page[:24], castagnoli), castagnoli, k)
	if crc != binary.LittleEndian.Uint32(page[24:]) {
		return "", 0, fmt.Errorf("%w: checksum mismatch", errBadHeader)
	}
	size = int64(binary.LittleEndian.Uint64(page[16:]))
	if size < 0 {
		return "", 0, fmt.Errorf("%w: a payload of %d bytes", errBadHeader, size)
	}
	return string(k), size, nil
}

// onDisk is the bytes an object of size payload bytes takes.
func onDisk(size int64) int64 { return headerBytes + size }
