package trust_test

import (
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/vouchkit/vouch/receipt"
)

// TestHandler_verifyReceipt_badIdempotencyKey: verify_receipt takes a
// body, so an Idempotency-Key sent empty, twice or of another form is
// refused as on every other POST route, a 400 naming the header with the
// rule it broke, never read as no key.
func TestHandler_verifyReceipt_badIdempotencyKey(t *testing.T) {
	s := newBadInputServer(t, time.Now)
	type fieldError struct{ Field, Rule string }
	for _, c := range []struct {
		name string
		keys []string
		want fieldError
	}{
		{"empty", []string{""}, fieldError{"Idempotency-Key", "required"}},
		{"twice", []string{"a", "b"}, fieldError{"Idempotency-Key", "unique"}},
		{"space", []string{"a b"}, fieldError{"Idempotency-Key", "pattern"}},
		{"too long", []string{strings.Repeat("k", 256)}, fieldError{"Idempotency-Key", "pattern"}},
	} {
		req, err := http.NewRequest(http.MethodPost, s.URL+receipt.VerifyPath, strings.NewReader(`{"receipt":{}}`))
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set("Authorization", "Bearer k")
		req.Header.Set("Content-Type", "application/json")
		req.Header["Idempotency-Key"] = c.keys
		resp, err := s.Client().Do(req)
		if err != nil {
			t.Fatal(err)
		}
		raw, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		var p struct {
			Status int
			Code   string
			Errors []fieldError
		}
		if resp.StatusCode != http.StatusBadRequest || json.Unmarshal(raw, &p) != nil {
			t.Errorf("%s: %d %s, want a 400 problem", c.name, resp.StatusCode, raw)
			continue
		}
		if diff := cmp.Diff([]fieldError{c.want}, p.Errors); diff != "" || p.Code != "invalid_request" {
			t.Errorf("%s: code %s, field errors (-want +got):\n%s", c.name, p.Code, diff)
		}
	}
}
