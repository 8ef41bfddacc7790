package fsmrt

import (
	"encoding/json"
	"sync"
	"unicode/utf8"
)

// scanner reads JSON from data, checking its syntax as encoding/json's
// does (json.Valid accepts exactly what document accepts as a whole, but
// for the top level, which must be an object): the grammar of RFC 8259,
// no control character in a string, any other byte allowed there (as
// encoding/json, which does not check UTF-8), at most maxDepth objects
// and arrays nested. It is a recursive descent over the bytes; FuzzScan
// checks it against json.Valid, FuzzMembers against json.Decoder.
type scanner struct {
	data []byte
	i    int
}

// maxDepth is encoding/json's bound on nesting.
const maxDepth = 10000

// document reads data, one JSON object with nothing but space around it,
// and returns its members, in order, appended to ms; dup is the index of the first member
// whose name an earlier one has (-1 when none); ok is false when data is
// not one JSON object.
func (s *scanner) document(ms []member) (_ []member, dup int, ok bool) {
	dup = -1
	s.space()
	if s.peek() != '{' {
		return nil, -1, false
	}
	s.i++
	s.space()
	if s.peek() == '}' {
		s.i++
		s.space()
		return nil, -1, s.i == len(s.data)
	}
	for {
		if s.peek() != '"' {
			return nil, -1, false
		}
		key, ok := s.key()
		if !ok {
			return nil, -1, false
		}
		s.space()
		if s.peek() != ':' {
			return nil, -1, false
		}
		s.i++
		s.space()
		start := s.i
		if !s.value(1) {
			return nil, -1, false
		}
		if dup < 0 && find(ms, string(key)) >= 0 {
			dup = len(ms)
		}
		ms = append(ms, member{key: key, value: json.RawMessage(s.data[start:s.i])})
		s.space()
		switch s.peek() {
		case ',':
			s.i++
			s.space()
			continue
		case '}':
			s.i++
			s.space()
			return ms, dup, s.i == len(s.data)
		}
		return nil, -1, false
	}
}

func (s *scanner) peek() byte {
	if s.i < len(s.data) {
		return s.data[s.i]
	}
	return 0
}

func (s *scanner) space() {
	for s.i < len(s.data) {
		switch s.data[s.i] {
		case ' ', '\t', '\n', '\r':
			s.i++
		default:
			return
		}
	}
}

// key reads the string at s.i and returns its value: its bytes in data
// when it has no escape and only ASCII.
func (s *scanner) key() ([]byte, bool) {
	start := s.i
	plain, ok := s.skipString()
	if !ok {
		return nil, false
	}
	raw := s.data[start:s.i]
	if plain {
		return raw[1 : len(raw)-1], true
	}
	var v string
	err := json.Unmarshal(raw, &v)
	return []byte(v), err == nil
}

// skipString moves past the string at s.i (its opening quote); plain
// reports that it has no escape and only ASCII (its bytes are its value).
func (s *scanner) skipString() (plain, ok bool) {
	s.i++ // '"'
	plain = true
	for s.i < len(s.data) {
		for s.i < len(s.data) && !inString[s.data[s.i]] {
			s.i++
		}
		if s.i == len(s.data) {
			break
		}
		switch c := s.data[s.i]; {
		case c == '"':
			s.i++
			return plain, true
		case c == '\\':
			plain = false
			s.i++
			switch s.peek() {
			case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
				s.i++
			case 'u':
				s.i++
				for range 4 {
					if !isHex(s.peek()) {
						return false, false
					}
					s.i++
				}
			default:
				return false, false
			}
		case c < 0x20:
			return false, false
		default: // not ASCII
			plain = false
			s.i++
		}
	}
	return false, false
}

// inString marks the bytes skipString looks at: the end of a string, an
// escape, a control character (refused) and the bytes beyond ASCII.
var inString = func() (t [256]bool) {
	for c := range t {
		t[c] = c == '"' || c == '\\' || c < 0x20 || c >= utf8.RuneSelf
	}
	return t
}()

func isHex(c byte) bool {
	return '0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F'
}

func isDigit(c byte) bool { return '0' <= c && c <= '9' }

// value moves past the value at s.i, depth objects and arrays deep.
func (s *scanner) value(depth int) bool {
	switch c := s.peek(); {
	case c == '"':
		_, ok := s.skipString()
		return ok
	case c == '{':
		return s.object(depth + 1)
	case c == '[':
		return s.array(depth + 1)
	case c == 't':
		return s.literal("true")
	case c == 'f':
		return s.literal("false")
	case c == 'n':
		return s.literal("null")
	case c == '-' || isDigit(c):
		return s.number()
	}
	return false
}

// object moves past the object at s.i, the depth-th nested.
func (s *scanner) object(depth int) bool {
	if depth > maxDepth {
		return false
	}
	s.i++ // '{'
	s.space()
	if s.peek() == '}' {
		s.i++
		return true
	}
	for {
		if s.peek() != '"' {
			return false
		}
		if _, ok := s.skipString(); !ok {
			return false
		}
		s.space()
		if s.peek() != ':' {
			return false
		}
		s.i++
		s.space()
		if !s.value(depth) {
			return false
		}
		s.space()
		switch s.peek() {
		case ',':
			s.i++
			s.space()
		case '}':
			s.i++
			return true
		default:
			return false
		}
	}
}

// array moves past the array at s.i, the depth-th nested.
func (s *scanner) array(depth int) bool {
	if depth > maxDepth {
		return false
	}
	s.i++ // '['
	s.space()
	if s.peek() == ']' {
		s.i++
		return true
	}
	for {
		if !s.value(depth) {
			return false
		}
		s.space()
		switch s.peek() {
		case ',':
			s.i++
			s.space()
		case ']':
			s.i++
			return true
		default:
			return false
		}
	}
}

// literal moves past word (true, false or null).
func (s *scanner) literal(word string) bool {
	if len(s.data)-s.i < len(word) || string(s.data[s.i:s.i+len(word)]) != word {
		return false
	}
	s.i += len(word)
	return true
}

// number moves past the number at s.i.
func (s *scanner) number() bool {
	if s.peek() == '-' {
		s.i++
	}
	switch c := s.peek(); {
	case c == '0':
		s.i++
	case '1' <= c && c <= '9':
		for s.i++; isDigit(s.peek()); s.i++ {
		}
	default:
		return false
	}
	if s.peek() == '.' {
		s.i++
		if !isDigit(s.peek()) {
			return false
		}
		for isDigit(s.peek()) {
			s.i++
		}
	}
	if c := s.peek(); c == 'e' || c == 'E' {
		s.i++
		if c := s.peek(); c == '+' || c == '-' {
			s.i++
		}
		if !isDigit(s.peek()) {
			return false
		}
		for isDigit(s.peek()) {
			s.i++
		}
	}
	return true
}

// memberSlices keeps the slices of members that decoding is done with,
// for the next object: decoding a saved machine reads three objects, and
// a server's start-up reads hundreds of thousands of machines.
var memberSlices = sync.Pool{New: func() any { return new([]member) }}

// getMembers returns a slice to read an object's members into (with
// membersIn); putMembers hands it back once nothing refers to the members
// read into it any more.
func getMembers() *[]member { return memberSlices.Get().(*[]member) }

func putMembers(p *[]member, ms []member) {
	if cap(ms) > 64 {
		return
	}
	clear(ms)
	*p = ms[:0]
	memberSlices.Put(p)
}
