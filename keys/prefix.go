package keys

import "fmt"

// prefixFault checks p against the prefix rules and returns "" when p is a
// valid prefix, or else the first broken rule, worded for an error
// message. The length rules come first; then the bytes are read left to
// right and the first byte that breaks a rule is reported with its offset.
// Segment rules are checked at the '/' (or the end) that closes a segment.
func prefixFault(p string) string {
	if len(p) == 0 {
		return "empty"
	}
	if len(p) > MaxPrefixBytes {
		return fmt.Sprintf("%d bytes, over the limit of %d", len(p), MaxPrefixBytes)
	}
	start := 0 // offset of the first byte of the current segment
	for i := 0; i <= len(p); i++ {
		if i < len(p) && p[i] != '/' {
			if !segmentByte(p[i]) {
				return fmt.Sprintf("%s at offset %d is not allowed (only A-Z a-z 0-9 . _ - /)", describeByte(p[i]), i)
			}
			continue
		}
		// p[start:i] is a whole segment; i is len(p) or a '/'.
		switch seg := p[start:i]; {
		case seg == "" && start == 0:
			return "leading '/' at offset 0"
		case seg == "" && i == len(p):
			return fmt.Sprintf("trailing '/' at offset %d", i-1)
		case seg == "":
			return fmt.Sprintf("empty segment: '/' at offset %d follows '/'", i)
		case seg == "." || seg == "..":
			return fmt.Sprintf("segment %q at offset %d (dot segments are not allowed)", seg, start)
		case isScopeSegment(seg):
			return fmt.Sprintf("segment %q at offset %d (the form of a scope segment is reserved)", seg, start)
		}
		start = i + 1
	}
	return ""
}

// segmentByte reports whether b may appear inside a prefix segment.
func segmentByte(b byte) bool {
	switch {
	case 'a' <= b && b <= 'z', 'A' <= b && b <= 'Z', '0' <= b && b <= '9':
		return true
	}
	return b == '.' || b == '_' || b == '-'
}

// describeByte names a byte for an error message: the character itself
// when it is printable ASCII, always its hex value.
func describeByte(b byte) string {
	if 0x20 <= b && b < 0x7f {
		return fmt.Sprintf("byte %q (0x%02x)", rune(b), b)
	}
	return fmt.Sprintf("byte 0x%02x", b)
}

// isScopeSegment reports whether seg has the form of the segment that
// holds a scope's digest ("s1-" and 32 lowercase hex digits): a prefix
// may not hold one, so that a key says unambiguously whether it is
// scoped.
func isScopeSegment(seg string) bool {
	if len(seg) != scopeSegmentBytes-1 || seg[:len(scopeMark)-1] != scopeMark[1:] {
		return false
	}
	return lowerHex(seg[len(scopeMark)-1:])
}

// lowerHex reports whether s is all lowercase hex digits.
func lowerHex(s string) bool {
	for i := 0; i < len(s); i++ {
		if b := s[i]; !('0' <= b && b <= '9' || 'a' <= b && b <= 'f') {
			return false
		}
	}
	return true
}
