package chatworker

import (
	"encoding/json"
	"fmt"
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

// parseAnswer reads a judge's answer from a reply's text: the first JSON
// object in the text that has a "verdict" member, whether the text is that
// object alone, the object in a code fence, or the object amid prose. Text
// up to a closing </think> tag (a reasoning model's thoughts) is skipped.
//
// The answer must hold a verdict among allowed (compared without regard to
// case or surrounding space), a confidence that is a number from 0 to 1,
// and reasons that are absent, null or a list of strings. Nothing is
// guessed: anything else is an *answerError.
func parseAnswer(text string, allowed []router.Verdict) (answer, *answerError) {
	if i := strings.LastIndex(text, "</think>"); i >= 0 {
		text = text[i+len("</think>"):]
	}
	obj, ok := findAnswer(text)
	if !ok {
		return answer{}, &answerError{err: ErrNoAnswer}
	}
	var raw struct {
		Verdict    json.RawMessage `json:"verdict"`
		Confidence json.RawMessage `json:"confidence"`
		Reasons    json.RawMessage `json:"reasons"`
	}
	if err := json.Unmarshal([]byte(obj), &raw); err != nil {
		return answer{}, &answerError{err: ErrBadAnswer, detail: err.Error()}
	}
	bad := func(format string, args ...any) (answer, *answerError) {
		return answer{}, &answerError{err: ErrBadAnswer, detail: fmt.Sprintf(format, args...)}
	}

	var a answer
	var v string
	if err := json.Unmarshal(raw.Verdict, &v); err != nil {
		return bad("verdict is not a string")
	}
	a.Verdict = router.Verdict(strings.ToUpper(strings.TrimSpace(v)))
	if !slices.Contains(allowed, a.Verdict) {
		return bad("verdict %q is not one of %s", openaihttp.Truncate(v, 40), joinVerdicts(allowed))
	}
	if isNull(raw.Confidence) {
		return bad("confidence is missing")
	}
	if err := json.Unmarshal(raw.Confidence, &a.Confidence); err != nil {
		return bad("confidence is not a number")
	}
	if !(a.Confidence >= 0 && a.Confidence <= 1) {
		return bad("confidence %v is not between 0 and 1", a.Confidence)
	}
	if !isNull(raw.Reasons) {
		if err := json.Unmarshal(raw.Reasons, &a.Reasons); err != nil {
			return bad("reasons is not a list of strings")
		}
	}
	return a, nil
}

// findAnswer returns the first balanced {...} in s that is valid JSON and
// has a "verdict" member (in any case, as encoding/json matches it). A
// valid object without one is skipped whole, so that an answer nested in
// another object is not taken.
func findAnswer(s string) (string, bool) {
	starts := 0
	for i := 0; i < len(s) && starts < maxStarts; i++ {
		if s[i] != '{' {
			continue
		}
		starts++
		end := closingBrace(s, i)
		if end < 0 {
			continue
		}
		obj := s[i:end]
		var members map[string]json.RawMessage
		if json.Unmarshal([]byte(obj), &members) != nil {
			continue
		}
		for k := range members {
			if strings.EqualFold(k, "verdict") {
				return obj, true
			}
		}
		i = end - 1
	}
	return "", false
}

// closingBrace returns the index just past the brace that closes the one at
// s[start], skipping braces inside JSON strings, or -1 if none does.
func closingBrace(s string, start int) int {
	depth, inString, escaped := 0, false, false
	for j := start; j < len(s); j++ {
		c := s[j]
		if inString {
			switch {
			case escaped:
				escaped = false
			case c == '\\':
				escaped = true
			case c == '"':
				inString = false
			}
			continue
		}
		switch c {
		case '"':
			inString = true
		case '{':
			depth++
		case '}':
			depth--
			if depth == 0 {
				return j + 1
			}
		}
	}
	return -1
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

// answerSchema returns the strict JSON schema of a judge's answer with the
// given verdicts. Strict mode wants every property required and no others;
// the range of confidence is stated in its description, since not every
// endpoint takes minimum and maximum in strict mode.
func answerSchema(name string, vs []router.Verdict) *jsonSchema {
	schema := map[string]any{
		"type": "object",
		"properties": map[string]any{
			"verdict": map[string]any{"type": "string", "enum": vs},
			"confidence": map[string]any{
				"type":        "number",
				"description": "How sure the verdict is, from 0 to 1.",
			},
			"reasons": map[string]any{
				"type":        "array",
				"items":       map[string]any{"type": "string"},
				"description": "Short reasons for the verdict.",
			},
		},
		"required":             []string{"verdict", "confidence", "reasons"},
		"additionalProperties": false,
	}
	raw, err := json.Marshal(schema)
	if err != nil {
		panic("chatworker: encoding a fixed schema: " + err.Error()) // cannot happen: fixed types
	}
	return &jsonSchema{Name: name, Schema: raw, Strict: true}
}
