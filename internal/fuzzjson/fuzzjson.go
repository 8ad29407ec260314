// Package fuzzjson builds JSON request bodies from a fuzzer's bytes, and
// checks a handler's answer against the interface's promise for bad
// input, for the fuzz targets that drive whole handlers.
package fuzzjson

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"sort"
	"strconv"
	"strings"
	"testing"
)

// New returns a Generator reading data.
func New(data []byte) *Generator { return &Generator{data: data} }

// Generator builds a syntactically valid JSON body from fuzz bytes: each
// member of a vocabulary is left out, given one of its usual values, or
// given an odd value (null, "", white space, 0, negative, huge, 1e400,
// a lone surrogate, the wrong type), so that the fuzzer explores
// combinations of members and values rather than JSON syntax.
type Generator struct {
	data []byte
	i    int
}

func (g *Generator) next() int {
	if g.i >= len(g.data) {
		return 0
	}
	b := g.data[g.i]
	g.i++
	return int(b)
}

// Vocabulary maps a member name to a Vocabulary (a nested object) or to
// []string (its usual values, as JSON text).
type Vocabulary map[string]any

// oddValues returns the odd values a member may be given instead of its
// usual ones.
func oddValues() []string {
	return []string{
		`null`, `""`, `"  "`, `"x"`, `0`, `-1`, `1`, `2`, `3`, `5`, `7`, `1.5`, `-0`, `1e400`, `-1e400`,
		`99999999999999999999`, `true`, `false`, `[]`, `{}`, `[""]`, `[1,1]`, `["1","2"]`, `[0]`, `[null]`,
		`{"kind":"array","items":[]}`, `{"kind":"array"}`, `"\ud800"`, `"NaN"`, `"1"`, `"0"`, `" x "`,
		`"VALID"`, `"INVALID"`, `"number"`, `{"a":1e400}`, `[[[]]]`, `"rcpt_aaaaaaaaaaaaaaaaaaaaaaaaaa"`,
		`"4bf92f3577b34da6a3ce929d0e0e4736"`,
	}
}

func (g *Generator) value(v any, depth int) string {
	c := g.next() % 8
	switch {
	case c == 7 || depth > 4:
		odd := oddValues()
		return odd[g.next()%len(odd)]
	}
	switch v := v.(type) {
	case Vocabulary:
		return g.object(v, depth+1)
	case []string:
		return v[g.next()%len(v)]
	}
	return `null`
}

// Object returns an object of vocabulary v, its members chosen by the
// generator's bytes.
func (g *Generator) Object(v Vocabulary) string { return g.object(v, 0) }

func (g *Generator) object(o Vocabulary, depth int) string {
	keys := make([]string, 0, len(o))
	for k := range o {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var b strings.Builder
	b.WriteByte('{')
	n := 0
	for _, k := range keys {
		if g.next()%3 == 0 {
			continue // absent
		}
		if n > 0 {
			b.WriteByte(',')
		}
		n++
		b.WriteString(strconv.Quote(k))
		b.WriteByte(':')
		b.WriteString(g.value(o[k], depth))
	}
	if g.next()%16 == 15 { // now and then a member the route does not define
		if n > 0 {
			b.WriteByte(',')
		}
		b.WriteString(`"extra":1`)
	}
	b.WriteByte('}')
	return b.String()
}

// fuzzProblem is the RFC 9457 body the fuzz targets read.
type fuzzProblem struct {
	Type, Title, Code, Detail string
	Status                    int
	RequestID                 string `json:"request_id"`
	Errors                    []struct{ Field, Rule, Message string }
}

// CheckAnswer applies docs/INTERFACE.md's promise for bad input to w,
// the answer to body sent to path: 200 with JSON, or a problem with a
// code and the same status; a 400 invalid_request names each field; no
// 5xx but a 504 timeout (the caller's own timeout running out) and the
// documented answers when workers failed (502 all_replicas_failed, 503
// insufficient_sessions).
func CheckAnswer(t testing.TB, w *httptest.ResponseRecorder, path string, body []byte) {
	t.Helper()
	if w.Code == http.StatusOK {
		if !json.Valid(w.Body.Bytes()) {
			t.Fatalf("%s: 200 with a body that is not JSON: %q", path, w.Body)
		}
		return
	}
	var p fuzzProblem
	if err := json.Unmarshal(w.Body.Bytes(), &p); err != nil {
		t.Fatalf("%s: status %d with a body that is not a problem: %q (request %q)", path, w.Code, w.Body, body)
	}
	if ct := w.Header().Get("Content-Type"); ct != "application/problem+json" {
		t.Fatalf("%s: status %d with Content-Type %q (request %q)", path, w.Code, ct, body)
	}
	if p.Code == "" || p.Status != w.Code || p.RequestID == "" || p.Title == "" {
		t.Fatalf("%s: status %d, problem without code/status/request id/title: %s (request %q)", path, w.Code, w.Body, body)
	}
	switch {
	case w.Code == http.StatusBadRequest:
		if p.Code != "invalid_request" && p.Code != "malformed_json" {
			t.Fatalf("%s: 400 with code %q (request %q)", path, p.Code, body)
		}
		if p.Code == "invalid_request" {
			if len(p.Errors) == 0 {
				t.Fatalf("%s: 400 invalid_request with no field errors: %s (request %q)", path, w.Body, body)
			}
			for _, e := range p.Errors {
				if e.Field == "" || e.Rule == "" || e.Message == "" {
					t.Fatalf("%s: 400 field error without field, rule or message: %s (request %q)", path, w.Body, body)
				}
			}
		}
	case w.Code > 400 && w.Code < 500:
	case w.Code == http.StatusGatewayTimeout && p.Code == "timeout":
	// Workers that failed (an output out of bounds is an ERROR run) are
	// the server's conditions, not the request's: documented answers.
	case w.Code == http.StatusBadGateway && p.Code == "all_replicas_failed":
	case w.Code == http.StatusServiceUnavailable && p.Code == "insufficient_sessions":
	default:
		t.Fatalf("%s: status %d code %q (%s) for request %q", path, w.Code, p.Code, w.Body, body)
	}
}
