package httpapi

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/vouchkit/vouch/problem"
)

// visibleASCII reports whether s is 1 to 255 visible ASCII characters,
// the keys the Server takes.
func visibleASCII(s string) bool {
	return len(s) >= 1 && len(s) <= 255 && strings.Trim(s, "!\"#$%&'()*+,-./0123456789:;<=>?@ABCDEFGHIJKLMNOPQRSTUVWXYZ[\\]^_`abcdefghijklmnopqrstuvwxyz{|}~") == ""
}

// FuzzIdempotencyKey sends a request twice with any Idempotency-Key
// header, sent none, once or twice: one key of 1 to 255 visible ASCII
// characters runs the call once and replays its answer; no header runs
// it each time; any other header (empty, sent twice, another character)
// is a 400 invalid_request problem naming the header, and the call never
// runs. A key scoped by its caller names that caller again, whatever the
// caller and key.
func FuzzIdempotencyKey(f *testing.F) {
	for _, s := range []struct {
		copies     uint8
		first, sec string
		scope      string
	}{
		{1, "k1", "", "key:alice"},
		{1, "0f8fad5b-d9cb-469f-a165-70867728950e", "", "ip:192.0.2.1"},
		{0, "", "", "payer:0x000000000000000000000000000000000000dEaD"},
		{2, "dupA", "dupA", "k"},
		{1, "", "", ""},
		{1, "has space", "", "12:x:y"},
		{1, strings.Repeat("k", 256), "", "3:abc"},
		{1, "caf\u00e9", "", ":"},
		{1, "a\tb", "", "key:\u00e9"},
	} {
		f.Add(s.copies, s.first, s.sec, s.scope)
	}
	f.Fuzz(func(t *testing.T, copies uint8, first, second, scope string) {
		if got := callerOf(scopedKey(scope, first)); got != scope {
			t.Fatalf("callerOf(scopedKey(%q, %q)) = %q", scope, first, got)
		}
		if strings.ContainsAny(first+second, "\r\n\x00") {
			return // not a header value
		}
		runs := 0
		s, err := NewServer(Config{Endpoints: []Endpoint{{Method: http.MethodPost, Path: "/call", Access: Public,
			Prepare: func(*http.Request, []byte) (Run, error) {
				return func(context.Context) (any, error) { runs++; return map[string]int{"run": runs}, nil }, nil
			}}}})
		if err != nil {
			t.Fatal(err)
		}
		keys := []string{first, second}[:copies%3]
		var answers []*httptest.ResponseRecorder
		for range 2 {
			r := httptest.NewRequest(http.MethodPost, "/call", strings.NewReader(`{}`))
			r.Header.Set("Content-Type", "application/json")
			if len(keys) > 0 {
				r.Header[HeaderIdempotencyKey] = keys
			}
			w := httptest.NewRecorder()
			s.ServeHTTP(w, r)
			answers = append(answers, w)
		}
		h := http.Header{}
		if len(keys) > 0 {
			h[HeaderIdempotencyKey] = keys
		}
		key, p := IdempotencyKey(h)
		switch {
		case len(keys) == 0:
			if key != "" || p != nil || runs != 2 {
				t.Fatalf("no key: key %q, problem %v, %d runs", key, p, runs)
			}
		case len(keys) == 1 && visibleASCII(first):
			if key != first || p != nil || runs != 1 {
				t.Fatalf("key %q: read %q, problem %v, %d runs", first, key, p, runs)
			}
			if answers[1].Code != http.StatusOK || answers[1].Header().Get(HeaderIdempotentReplayed) != "true" || answers[1].Body.String() != answers[0].Body.String() {
				t.Fatalf("key %q: the repeat is %d %q, replayed %q; want %q replayed", first, answers[1].Code, answers[1].Body, answers[1].Header().Get(HeaderIdempotentReplayed), answers[0].Body)
			}
			return
		default:
			if key != "" || p == nil || p.Status != http.StatusBadRequest || p.Code != problem.CodeInvalidRequest || !strings.Contains(p.Detail, HeaderIdempotencyKey) ||
				len(p.Errors) != 1 || p.Errors[0].Field != HeaderIdempotencyKey {
				t.Fatalf("keys %q: read %q, problem %v", keys, key, p)
			}
			if runs != 0 {
				t.Fatalf("keys %q: the call ran %d times", keys, runs)
			}
		}
		for _, w := range answers {
			var got problem.Details
			switch {
			case len(keys) == 0 && w.Code == http.StatusOK:
			case len(keys) > 0 && w.Code == http.StatusBadRequest && json.Unmarshal(w.Body.Bytes(), &got) == nil && got.Code == problem.CodeInvalidRequest:
			default:
				t.Fatalf("keys %q: %d %q", keys, w.Code, w.Body)
			}
		}
	})
}
