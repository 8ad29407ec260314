package chatworker

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/vouchkit/vouch/internal/openaihttp"
	"github.com/vouchkit/vouch/router"
)

// answer is a judge's answer: the JSON object {verdict, confidence,
// reasons} that validations and fact checks ask for.
type answer struct {
	Verdict    router.Verdict
	Confidence float64
	Reasons    []string
	// Notes say what the answer broke after a complete verdict, which
	// keeps its vote: a confidence missing or outside [0, 1] (none is
	// then recorded), reasons that are not a list of strings (dropped),
	// or a reply that ends, or stops being JSON, after the verdict.
	Notes []string
	// verdictAt and verdictEnd are the byte offsets of the verdict's
	// text (inside its quotes) in the reply's text.
	verdictAt, verdictEnd int
}

// answerError says why a reply holds no usable answer: err is ErrNoAnswer
// or ErrBadAnswer, detail what the answer broke.
type answerError struct {
	err    error
	detail string
}

// maxStarts bounds the opening braces findAnswer tries, so that a reply
// full of braces costs linear time.
const maxStarts = 64

// maxThinkEnds bounds the </think> tags in a reply, since parseAnswer
// reads the reply after each of them: a reply with more is refused.
const maxThinkEnds = 8

// parseAnswer reads a judge's answer from a reply's text: the first JSON
// object in the text that has a "verdict" member, whether the text is that
// object alone, the object in a code fence, or the object amid prose.
//
// A reasoning model's thoughts come first and are skipped: they end at the
// first </think> tag, whether the reply opens them with <think> or the chat
// template opened them in the prompt (as DeepSeek-R1's and QwQ's do), and
// a further <think> block that follows is skipped too. A reply that opens
// with the answer (a JSON object or a code fence) has no thoughts, and a
// reply that opens thoughts no tag closes (cut short, as at max_tokens)
// has no answer: a draft verdict is not one. Since thoughts and a note
// after the answer may both quote the tag (as found in a claim they
// weigh), the reply is also read after each later </think> and, unless it
// opens with <think>, as if it had no thoughts. When these readings give
// different verdicts, the reply is an *answerError (ErrBadAnswer), never
// the verdict of one of them.
//
// The verdict decides whether there is an answer: it must be a string
// among allowed (compared without regard to case or surrounding space),
// given once or repeated with the same value ("verdict" and "Verdict" name
// the same member), or the reply is an *answerError. Once the verdict is
// complete, what follows cannot take its vote away: the object may be cut
// short (a reply stopped at max_tokens) or broken after it, the confidence
// may be missing or outside [0, 1] (then it is 0, for none), the reasons
// may be no list of strings (then they are dropped). Each of these is
// written in Notes, which the run's evidence records; nothing is guessed.
func parseAnswer(text string, allowed []router.Verdict) (answer, *answerError) {
	bad := func(format string, args ...any) (answer, *answerError) {
		return answer{}, &answerError{err: ErrBadAnswer, detail: fmt.Sprintf(format, args...)}
	}
	starts, ok := answerStarts(text)
	if !ok {
		return bad("the reply closes its thoughts more than %d times", maxThinkEnds)
	}
	if len(starts) == 0 {
		return answer{}, &answerError{err: ErrNoAnswer} // thoughts never closed
	}
	base := starts[0]
	obj, ok := findAnswer(text[base:])
	if !ok {
		return answer{}, &answerError{err: ErrNoAnswer}
	}
	for _, s := range starts[1:] {
		other, ok := findAnswer(text[s:])
		if !ok {
			continue
		}
		if v, w := verdictText(obj.member("verdict").raw), verdictText(other.member("verdict").raw); v != w {
			return bad("the reply reads as %s or as %s, depending on which </think>, if any, ends its thoughts",
				openaihttp.Truncate(v, 40), openaihttp.Truncate(w, 40))
		}
	}
	var a answer
	verdict := obj.member("verdict")
	var v string
	if err := json.Unmarshal(verdict.raw, &v); err != nil {
		return bad("verdict is not a string")
	}
	a.Verdict = router.Verdict(strings.ToUpper(strings.TrimSpace(v)))
	if !slices.Contains(allowed, a.Verdict) {
		return bad("verdict %q is not one of %s", openaihttp.Truncate(v, 40), joinVerdicts(allowed))
	}
	for _, m := range obj.members {
		if strings.EqualFold(m.key, "verdict") && verdictText(m.raw) != string(a.Verdict) {
			return bad("the answer gives two verdicts, %s and %s", openaihttp.Truncate(string(m.raw), 40), openaihttp.Truncate(string(verdict.raw), 40))
		}
	}
	a.verdictAt, a.verdictEnd = base+verdict.at+1, base+verdict.at+len(verdict.raw)-1

	switch c := obj.member("confidence").raw; {
	case isNull(c):
		a.Notes = append(a.Notes, "confidence missing: none recorded")
	case json.Unmarshal(c, &a.Confidence) != nil:
		a.Notes = append(a.Notes, fmt.Sprintf("confidence %s is not a number: none recorded", openaihttp.Truncate(string(c), 40)))
	case !(a.Confidence >= 0 && a.Confidence <= 1):
		a.Notes = append(a.Notes, fmt.Sprintf("confidence %s is outside [0, 1]: none recorded", openaihttp.Truncate(string(c), 40)))
		a.Confidence = 0
	}
	if r := obj.member("reasons").raw; !isNull(r) {
		if err := json.Unmarshal(r, &a.Reasons); err != nil {
			a.Reasons = nil
			a.Notes = append(a.Notes, "reasons is not a list of strings: dropped")
		}
	}
	if obj.broken != "" {
		a.Notes = append(a.Notes, obj.broken)
	}
	return a, nil
}

// answerStarts returns the offsets in text at which parseAnswer reads the
// answer: first just past the </think> that ends the thoughts (0 when the
// reply has none), then where the answer would begin if that tag were
// quoted: just past each later </think>, and 0 when the reply does not
// open with <think>. A </think> that another <think> follows ends no
// thoughts. answerStarts returns no offsets when the reply opens thoughts
// that no tag closes, and false when it holds more than maxThinkEnds
// </think> tags.
func answerStarts(text string) ([]int, bool) {
	const space = " \t\r\n"
	head := strings.TrimLeft(text, space)
	if strings.HasPrefix(head, "{") || strings.HasPrefix(head, "```") {
		return []int{0}, true // the answer comes first: there are no thoughts
	}
	var starts []int
	tags := 0
	for i := 0; ; {
		j := strings.Index(text[i:], "</think>")
		if j < 0 {
			break
		}
		if tags++; tags > maxThinkEnds {
			return nil, false
		}
		i += j + len("</think>")
		if !strings.HasPrefix(strings.TrimLeft(text[i:], space), "<think>") {
			starts = append(starts, i)
		}
	}
	opened := strings.HasPrefix(head, "<think>")
	switch {
	case tags == 0 && !opened:
		return []int{0}, true
	case len(starts) > 0 && !opened:
		starts = append(starts, 0)
	}
	return starts, true
}

// verdictText returns a verdict's value as parseAnswer compares it: the
// string in upper case without surrounding space, or the JSON of a value
// that is not a string.
func verdictText(raw json.RawMessage) string {
	var v string
	if json.Unmarshal(raw, &v) != nil {
		return string(raw)
	}
	return strings.ToUpper(strings.TrimSpace(v))
}

// object is a JSON object read member by member from a reply's text.
type object struct {
	members []member
	// broken says why the object ends before its closing brace, or is
	// empty for a complete object.
	broken string
}

// member is one member of an object: its value's JSON and the value's
// byte offset in the text searched.
type member struct {
	key string
	raw json.RawMessage
	at  int
}

// member returns the last member named key, in any case (as encoding/json
// matches it), or the zero member.
func (o object) member(key string) member {
	for i := len(o.members) - 1; i >= 0; i-- {
		if strings.EqualFold(o.members[i].key, key) {
			return o.members[i]
		}
	}
	return member{}
}

// findAnswer returns the first object in s that has a "verdict" member (in
// any case) with a complete value: a complete object, or one that is cut
// short or broken after the verdict. A complete object without one is
// skipped whole, so that an answer nested in another object is not taken.
func findAnswer(s string) (object, bool) {
	starts := 0
	for i := 0; i < len(s) && starts < maxStarts; i++ {
		if s[i] != '{' {
			continue
		}
		starts++
		obj, end := readObject(s, i)
		if obj.member("verdict").raw != nil {
			return obj, true
		}
		if end > 0 {
			i = end - 1
		}
	}
	return object{}, false
}

// readObject reads the members of the object that opens at s[start], each
// with a complete value, up to its closing brace or to where the text ends
// or stops being JSON. end is the index just past the closing brace, or 0
// when the object is not complete.
func readObject(s string, start int) (obj object, end int) {
	dec := json.NewDecoder(strings.NewReader(s[start:]))
	if _, err := dec.Token(); err != nil {
		return object{broken: err.Error()}, 0
	}
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			obj.broken = "the answer is not valid JSON after its last complete member: " + err.Error()
			return obj, 0
		}
		key, _ := tok.(string)
		var raw json.RawMessage
		if err := dec.Decode(&raw); err != nil {
			obj.broken = brokenAt(key, err)
			return obj, 0
		}
		at := start + int(dec.InputOffset()) - len(raw)
		obj.members = append(obj.members, member{key: key, raw: raw, at: at})
	}
	tok, err := dec.Token()
	if err != nil || tok != json.Delim('}') {
		obj.broken = "the reply ends before the answer's closing brace"
		if err != nil && !errors.Is(err, io.EOF) {
			obj.broken = "the answer is not valid JSON after its last complete member"
		}
		return obj, 0
	}
	return obj, start + int(dec.InputOffset())
}

// brokenAt says why the value of member key could not be read.
func brokenAt(key string, err error) string {
	if errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, io.EOF) {
		return fmt.Sprintf("the reply ends inside %q", openaihttp.Truncate(key, 40))
	}
	return fmt.Sprintf("the answer is not valid JSON inside %q: %v", openaihttp.Truncate(key, 40), err)
}

func isNull(raw json.RawMessage) bool {
	return len(raw) == 0 || string(raw) == "null"
}

func joinVerdicts(vs []router.Verdict) string {
	s := make([]string, len(vs))
	for i, v := range vs {
		s[i] = string(v)
	}
	return strings.Join(s, ", ")
}

// jsonSchema is the json_schema member of response_format.
type jsonSchema struct {
	Name   string          `json:"name"`
	Schema json.RawMessage `json:"schema"`
	Strict bool            `json:"strict"`
}

// Bounds on a judge's reasons, stated in the answer schema so that a
// constrained decoder cannot repeat reasons until max_tokens.
const (
	maxReasons     = 3
	maxReasonBytes = 200
)

// property is one property of the answer schema.
type property struct {
	Type        string           `json:"type"`
	Enum        []router.Verdict `json:"enum,omitempty"`
	Description string           `json:"description,omitempty"`
	Items       *property        `json:"items,omitempty"`
	MaxItems    int              `json:"maxItems,omitempty"`
	MaxLength   int              `json:"maxLength,omitempty"`
}

// answerProperties lists the answer's properties in the order a model must
// write them: a grammar-constrained server (llama.cpp, vLLM's guided
// decoding, Ollama's format) follows the schema's order, so the verdict
// comes first and a reply cut short still holds it.
type answerProperties struct {
	Verdict    property `json:"verdict"`
	Confidence property `json:"confidence"`
	Reasons    property `json:"reasons"`
}

// objectSchema is the answer schema's top level.
type objectSchema struct {
	Type                 string           `json:"type"`
	Properties           answerProperties `json:"properties"`
	Required             []string         `json:"required"`
	AdditionalProperties bool             `json:"additionalProperties"`
}

// answerSchema returns the strict JSON schema of a judge's answer with the
// given verdicts, its properties in the order verdict, confidence,
// reasons, and the reasons bounded in count and length. Strict mode wants
// every property required and no others; the range of confidence is
// stated in its description, since not every endpoint takes minimum and
// maximum in strict mode.
func answerSchema(name string, vs []router.Verdict) *jsonSchema {
	schema := objectSchema{
		Type: "object",
		Properties: answerProperties{
			Verdict:    property{Type: "string", Enum: vs},
			Confidence: property{Type: "number", Description: "How sure the verdict is, from 0 to 1."},
			Reasons: property{
				Type:        "array",
				Items:       &property{Type: "string", MaxLength: maxReasonBytes},
				MaxItems:    maxReasons,
				Description: fmt.Sprintf("At most %d short reasons for the verdict.", maxReasons),
			},
		},
		Required: []string{"verdict", "confidence", "reasons"},
	}
	raw, err := json.Marshal(schema)
	if err != nil {
		panic("chatworker: encoding a fixed schema: " + err.Error()) // cannot happen: fixed types
	}
	return &jsonSchema{Name: name, Schema: raw, Strict: true}
}
