package jsonbody

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf16"
	"unicode/utf8"

	"github.com/vouchkit/vouch/problem"
)

// MaxDepth is the deepest nesting of objects and arrays that Decode and
// Unmarshal accept. encoding/json alone allows 10000 levels; no request of
// the project needs more than a few.
const MaxDepth = 128

// checkText rejects bytes that are not UTF-8. encoding/json would replace
// them with U+FFFD, a silent change of what the caller sent.
func checkText(data []byte) error {
	if utf8.Valid(data) {
		return nil
	}
	off := 0
	for off < len(data) {
		r, n := utf8.DecodeRune(data[off:])
		if r == utf8.RuneError && n <= 1 {
			break
		}
		off += n
	}
	return problem.Newf(http.StatusBadRequest, problem.CodeMalformedJSON, "invalid UTF-8 at byte offset %d", off)
}

// tooDeep is the error of an object or array opened at byte offset i
// below MaxDepth others.
func tooDeep(i int) error {
	return problem.Newf(http.StatusBadRequest, problem.CodeMalformedJSON,
		"JSON nested deeper than %d levels at byte offset %d", MaxDepth, i)
}

// depthOffset returns the byte offset in data of the first object or
// array opened below MaxDepth others, or -1. data need not be valid
// JSON: it is what encoding/json refused for nesting deeper than its own
// limit.
func depthOffset(data []byte) int {
	depth := 0
	for i := 0; i < len(data); i++ {
		switch data[i] {
		case '"':
			for i++; i < len(data) && data[i] != '"'; i++ {
				if data[i] == '\\' {
					i++
				}
			}
		case '{', '[':
			if depth == MaxDepth {
				return i
			}
			depth++
		case '}', ']':
			depth--
		}
	}
	return -1
}

// frame is one open object or array of checkStructure's walk.
type frame struct {
	object    bool
	expectKey bool                // an object's next string is a member name
	keys      [][]byte            // the member names seen, unescaped
	set       map[string]struct{} // the same names once there are many
	index     int                 // an array's current element
}

// linearKeys is how many member names an object's names are compared
// with one by one; past it they go in a map, so that a body of many
// names costs linear time.
const linearKeys = 16

// checkStructure walks data, which encoding/json has already accepted as
// one JSON value, and rejects nesting deeper than maxDepth (zero: no
// limit but encoding/json's own, which data has passed), objects that
// repeat a member name, and strings that escape a lone UTF-16 surrogate.
// encoding/json keeps the last of repeated names while other readers keep
// the first; refusing them means every reader of a request sees the same
// request. The error names the JSON path of the object and the repeated
// member, or of the string. It also reports whether a member name holds a
// capital or a byte outside ASCII: only such a name can match a field of
// another spelling, as encoding/json matches names under case folding
// (see sameField).
func checkStructure(data []byte, maxDepth int) (folds bool, err error) {
	stack := make([]frame, 0, 16)
	for i := 0; i < len(data); i++ {
		switch data[i] {
		case '{', '[':
			if maxDepth > 0 && len(stack) == maxDepth {
				return false, tooDeep(i)
			}
			// Reuse the names slice of a frame popped at this depth.
			var keys [][]byte
			if len(stack) < cap(stack) {
				keys = stack[:len(stack)+1][len(stack)].keys[:0]
			}
			stack = append(stack, frame{object: data[i] == '{', expectKey: data[i] == '{', keys: keys})
			// A reused frame's map is dropped: it holds another object's names.
		case '}', ']':
			stack = stack[:len(stack)-1]
		case ',':
			top := &stack[len(stack)-1]
			if top.object {
				top.expectKey = true
			} else {
				top.index++
			}
		case '"':
			end := i + 1
			escaped := false
			for ; data[end] != '"'; end++ {
				if data[end] == '\\' {
					escaped = true
					end++
				}
			}
			if escaped {
				if err := checkSurrogates(data[i+1:end], stack); err != nil {
					return false, err
				}
			}
			if n := len(stack); n > 0 && stack[n-1].object && stack[n-1].expectKey {
				top := &stack[n-1]
				name := data[i+1 : end]
				if escaped {
					var s string
					json.Unmarshal(data[i:end+1], &s) // valid: encoding/json read it
					name = []byte(s)
				}
				if top.seen(name) {
					return false, problem.Invalid([]problem.FieldError{{
						Field:   path(stack[:n-1], string(name)),
						Rule:    "unique",
						Message: fmt.Sprintf("member %q appears more than once in the object", name),
					}})
				}
				folds = folds || bytes.ContainsFunc(name, func(r rune) bool { return 'A' <= r && r <= 'Z' || r >= utf8.RuneSelf })
				top.keys = append(top.keys, name)
				if top.set != nil || len(top.keys) > linearKeys {
					if top.set == nil {
						top.set = make(map[string]struct{}, 2*linearKeys)
						for _, k := range top.keys {
							top.set[string(k)] = struct{}{}
						}
					}
					top.set[string(name)] = struct{}{}
				}
				top.expectKey = false
			}
			i = end
		}
	}
	return folds, nil
}

// seen reports whether the object of f already has a member named name.
func (f *frame) seen(name []byte) bool {
	if f.set != nil {
		_, ok := f.set[string(name)]
		return ok
	}
	for _, k := range f.keys {
		if bytes.Equal(k, name) {
			return true
		}
	}
	return false
}

// checkSurrogates rejects a \u escape of a UTF-16 surrogate that is not
// half of a pair in text, the inside of a JSON string that encoding/json
// has accepted, at the place stack is in. encoding/json would read it as
// U+FFFD, a silent change of what the caller sent, and RFC 8785 cannot
// canonicalize it. The error names the string's path: the value's, or
// for a member name the object's.
func checkSurrogates(text []byte, stack []frame) error {
	for j := 0; j < len(text); j++ {
		if text[j] != '\\' {
			continue
		}
		j++
		if text[j] != 'u' {
			continue
		}
		r := hex4(text[j+1 : j+5])
		switch {
		case !utf16.IsSurrogate(r):
			j += 4
			continue
		case r < 0xdc00 && j+10 < len(text) && text[j+5] == '\\' && text[j+6] == 'u' &&
			utf16.DecodeRune(r, hex4(text[j+7:j+11])) != unicode.ReplacementChar:
			j += 10 // a pair
			continue
		}
		field, what := "(body)", "holds"
		if n := len(stack); n > 0 {
			top := stack[n-1]
			if top.object && top.expectKey {
				stack, what = stack[:n-1], "has a member name that holds"
			}
			if p := position(stack); p != "" {
				field = p
			}
		}
		return problem.Invalid([]problem.FieldError{{
			Field: field, Rule: "unicode",
			Message: fmt.Sprintf(`%s the lone UTF-16 surrogate %s, which is no character: send text as UTF-8 or as a surrogate pair`, what, text[j-1:j+5]),
		}})
	}
	return nil
}

// hex4 returns the value of four hex digits, which encoding/json has
// already checked.
func hex4(h []byte) rune {
	n, _ := strconv.ParseUint(string(h), 16, 16)
	return rune(n)
}

// path returns the JSON path of member name of the innermost object of
// stack, whose enclosing frames are outer: "claim.output.x",
// "items[2].id". A member name that is empty or holds other characters
// than letters, digits, "_" and "-" is written quoted in brackets
// (`meta["a.b"]`, `[""]`), so that every path names one member.
func path(outer []frame, name string) string {
	var b strings.Builder
	writePosition(&b, outer)
	member(&b, name)
	return b.String()
}

// position returns the JSON path of the value being read within stack,
// as path writes it: the last member of each object, the current element
// of each array. It is "" at the top.
func position(stack []frame) string {
	var b strings.Builder
	writePosition(&b, stack)
	return b.String()
}

func writePosition(b *strings.Builder, stack []frame) {
	for _, f := range stack {
		if f.object {
			member(b, string(f.keys[len(f.keys)-1]))
		} else {
			b.WriteString("[" + strconv.Itoa(f.index) + "]")
		}
	}
}

// member appends one member name to a path: a name of letters, digits,
// "_" and "-" after a dot, any other in brackets as a JSON string.
func member(b *strings.Builder, name string) {
	if !plainName(name) {
		b.WriteByte('[')
		quoteJSON(b, name)
		b.WriteByte(']')
		return
	}
	if b.Len() > 0 {
		b.WriteByte('.')
	}
	b.WriteString(name)
}

// quoteJSON appends name as a JSON string: a quote, a backslash and a
// control character escaped, every other character as it is (a member's
// name is valid UTF-8, which the decoder checked).
func quoteJSON(b *strings.Builder, name string) {
	b.WriteByte('"')
	for _, r := range name {
		switch {
		case r == '"' || r == '\\':
			b.WriteByte('\\')
			b.WriteRune(r)
		case r < 0x20:
			const hex = "0123456789abcdef"
			b.WriteString(`\u00`)
			b.WriteByte(hex[r>>4])
			b.WriteByte(hex[r&0xf])
		default:
			b.WriteRune(r)
		}
	}
	b.WriteByte('"')
}

func plainName(name string) bool {
	if name == "" {
		return false
	}
	for _, r := range name {
		if !(r == '_' || r == '-' || '0' <= r && r <= '9' || 'a' <= r && r <= 'z' || 'A' <= r && r <= 'Z') {
			return false
		}
	}
	return true
}
