package trusta2a

import (
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/a2aproject/a2a-go/a2a"

	"github.com/vouchkit/vouch/internal/jsonbody"
	"github.com/vouchkit/vouch/problem"
)

// A form is a sentence this agent reads, written as words to match
// without regard to case, {member} for a quoted string (JSON's double
// quotes and escapes, or “curly quotes”) that becomes that member,
// {member...} for the rest of the text, and [...] for an optional part.
// Options may follow a form: "policy P", "receipt R", "mode M",
// "replicas N", joined by "with" and "and".
type form struct {
	skill   string
	pattern string
}

// forms are the sentences the agent reads. The card's examples use them.
var forms = []form{
	{SkillValidateClaim, `validate the claimed result {claimed_result} [for the task {input}]`},
	{SkillValidateClaim, `is {claimed_result} a correct answer to {input}`},
	{SkillDelegateTask, `delegate the task {input}`},
	{SkillArbitrate, `the seller delivered {claimed_result} [for the task {input}] the buyer says {dispute_context} [who is right]`},
	{SkillFactcheck, `fact-check {claim}`},
	{SkillFactcheck, `is it true that {claim...}`},
}

// options are the option words each skill reads after its form.
var options = map[string][]string{
	SkillValidateClaim: {"policy", "receipt"},
	SkillDelegateTask:  {"policy", "receipt"},
	SkillArbitrate:     {"policy", "receipt"},
	SkillFactcheck:     {"mode", "replicas"},
}

// token is a word (lower-cased, without trailing punctuation) or a quoted
// string of a text, with its offset.
type token struct {
	val    string
	quoted bool
	start  int
}

// fromMessage reads the call a message asks for: its data part when it
// has one, else its text. sent, when not nil, is the data of each of the
// message's data parts as sent, read in place of the decoded data, whose
// numbers may have been rounded (sentData).
func fromMessage(msg *a2a.Message, sent []json.RawMessage) (*call, error) {
	if msg == nil {
		return nil, &InputError{Argument: "message", Message: "is required"}
	}
	var data []a2a.DataPart
	var texts []string
	for _, p := range msg.Parts {
		switch p := p.(type) {
		case a2a.DataPart:
			data = append(data, p)
		case a2a.TextPart:
			texts = append(texts, p.Text)
		default:
			return nil, &InputError{Argument: "parts", Message: "a file part is not read: send a text part or a data part"}
		}
	}
	switch {
	case len(data) > 1:
		return nil, &InputError{Argument: "parts", Message: fmt.Sprintf("%d data parts: send one call per message", len(data))}
	case len(data) == 1 && len(sent) == 1:
		if obj, err := objectOf(sent[0]); err == nil {
			return fromData(obj)
		}
		return fromData(data[0].Data)
	case len(data) == 1:
		return fromData(data[0].Data)
	}
	return fromText(strings.Join(texts, "\n"))
}

// fromText reads a text: a JSON object of arguments, or a sentence in one
// of the forms.
func fromText(text string) (*call, error) {
	text = strings.TrimSpace(text)
	if text == "" {
		return nil, &InputError{Argument: "parts", Message: "the message has no text and no data part"}
	}
	if text[0] == '{' {
		var p *problem.Details
		if err := jsonbody.Unmarshal([]byte(text), new(any)); errors.As(err, &p) && len(p.Errors) > 0 {
			return nil, &InputError{Argument: "text", Message: p.Errors[0].Field + ": " + p.Errors[0].Message}
		}
		data, err := objectOf([]byte(text))
		if err != nil {
			return nil, &InputError{Argument: "text", Message: "starts with { but is not a JSON object: " + err.Error()}
		}
		return fromData(data)
	}
	toks, err := tokenize(text)
	if err != nil {
		return nil, err
	}
	for _, f := range forms {
		a, rest, ok := match(strings.Fields(f.pattern), toks, text)
		if !ok {
			continue
		}
		if err := a.options(f.skill, rest); err != nil {
			return nil, err
		}
		return a.call(f.skill)
	}
	var allowed []string
	for _, f := range forms {
		allowed = append(allowed, display(f.pattern))
	}
	allowed = append(allowed, "a JSON object of the skill's arguments")
	return nil, &InputError{Argument: "text", Message: "is in none of the forms this agent reads", Allowed: allowed}
}

// display writes a form's pattern as a person would: {member} as "…".
func display(pattern string) string {
	var words []string
	for w := range strings.FieldsSeq(pattern) {
		open, close := strings.HasPrefix(w, "["), strings.HasSuffix(w, "]")
		w = strings.Trim(w, "[]")
		switch {
		case strings.HasSuffix(w, "...}"):
			w = "…"
		case strings.HasPrefix(w, "{"):
			w = `"…"`
		}
		if open {
			w = "[" + w
		}
		if close {
			w += "]"
		}
		words = append(words, w)
	}
	return strings.Join(words, " ")
}

// tokenize splits text into words and quoted strings.
func tokenize(text string) ([]token, error) {
	var toks []token
	for i := 0; i < len(text); {
		r, size := utf8.DecodeRuneInString(text[i:])
		switch {
		case unicode.IsSpace(r):
			i += size
		case r == '"':
			end := closingQuote(text, i+1)
			if end < 0 {
				return nil, &InputError{Argument: "text", Message: fmt.Sprintf("the quote at byte %d is not closed", i)}
			}
			var s string
			if err := json.Unmarshal([]byte(text[i:end+1]), &s); err != nil {
				return nil, &InputError{Argument: "text", Message: fmt.Sprintf("the quoted string at byte %d is not a JSON string: %v", i, err)}
			}
			toks = append(toks, token{val: s, quoted: true, start: i})
			i = end + 1
		case r == '“':
			end := strings.IndexRune(text[i+size:], '”')
			if end < 0 {
				return nil, &InputError{Argument: "text", Message: fmt.Sprintf("the quote at byte %d is not closed", i)}
			}
			toks = append(toks, token{val: text[i+size : i+size+end], quoted: true, start: i})
			i += size + end + len("”")
		default:
			end := i
			for end < len(text) {
				r, n := utf8.DecodeRuneInString(text[end:])
				if unicode.IsSpace(r) || r == '"' || r == '“' {
					break
				}
				end += n
			}
			if w := strings.TrimRight(text[i:end], ",;:.?!"); w != "" {
				toks = append(toks, token{val: strings.ToLower(w), start: i})
			}
			i = end
		}
	}
	return toks, nil
}

// closingQuote returns the index of the double quote that closes a JSON
// string whose content starts at from, or -1.
func closingQuote(text string, from int) int {
	for i := from; i < len(text); i++ {
		switch text[i] {
		case '\\':
			i++
		case '"':
			return i
		}
	}
	return -1
}

// match matches pattern (its words) against toks, returning the members
// it binds and the tokens left over.
func match(pattern []string, toks []token, text string) (args, []token, bool) {
	if len(pattern) == 0 {
		return args{}, toks, true
	}
	w := pattern[0]
	if strings.HasPrefix(w, "[") {
		end := slices.IndexFunc(pattern, func(p string) bool { return strings.HasSuffix(p, "]") })
		group := slices.Clone(pattern[:end+1])
		group[0], group[end] = strings.TrimPrefix(group[0], "["), strings.TrimSuffix(group[end], "]")
		if a, rest, ok := match(append(group, pattern[end+1:]...), toks, text); ok {
			return a, rest, true
		}
		return match(pattern[end+1:], toks, text)
	}
	if len(toks) == 0 {
		return nil, nil, false
	}
	switch {
	case strings.HasSuffix(w, "...}"):
		rest := strings.TrimRight(strings.TrimSpace(text[toks[0].start:]), "?!. ")
		if len(toks) == 1 && toks[0].quoted {
			rest = toks[0].val
		}
		if rest == "" {
			return nil, nil, false
		}
		return args{strings.Trim(w, "{.}"): mustJSON(rest)}, nil, true
	case strings.HasPrefix(w, "{"):
		if !toks[0].quoted {
			return nil, nil, false
		}
		a, rest, ok := match(pattern[1:], toks[1:], text)
		if ok {
			a[strings.Trim(w, "{}")] = mustJSON(toks[0].val)
		}
		return a, rest, ok
	case toks[0].quoted || toks[0].val != w:
		return nil, nil, false
	}
	return match(pattern[1:], toks[1:], text)
}

// mustJSON writes s as a JSON string, which never fails.
func mustJSON(s string) json.RawMessage {
	raw, _ := json.Marshal(s)
	return raw
}

// options reads the options that follow a form into a: "policy P",
// "receipt R", "mode M", "replicas N", joined by "with" and "and".
func (a args) options(skill string, toks []token) error {
	allowed := options[skill]
	for i := 0; i < len(toks); i++ {
		t := toks[i]
		if !t.quoted && (t.val == "with" || t.val == "and") {
			continue
		}
		if t.quoted || !slices.Contains(allowed, t.val) {
			return &InputError{Argument: "text", Message: fmt.Sprintf("%q after the %s sentence is not an option", t.val, skill),
				Allowed: slices.Clone(allowed)}
		}
		if i+1 == len(toks) {
			return &InputError{Argument: t.val, Message: "has no value after it in the text"}
		}
		i++
		if _, dup := a[t.val]; dup {
			return &InputError{Argument: t.val, Message: "is given twice in the text"}
		}
		if t.val == "replicas" {
			a[t.val] = json.RawMessage(toks[i].val)
			if !json.Valid(a[t.val]) {
				a[t.val] = mustJSON(toks[i].val)
			}
			continue
		}
		a[t.val] = mustJSON(toks[i].val)
	}
	return nil
}
