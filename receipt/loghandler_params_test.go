package receipt_test

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/vouchkit/vouch/receipt"
)

// TestHandler_unknownQueryParameters: a query parameter an endpoint does
// not define is a 400 naming it (rule "unknown"), after the errors of the
// parameters it defines, as an unknown member of a body is refused,
// rather than ignored.
func TestHandler_unknownQueryParameters(t *testing.T) {
	l, store := newTestLog(t, 1, [][]byte{[]byte(`{"n":1}`), []byte(`{"n":2}`)})
	srv := httptest.NewServer(&receipt.Handler{Store: store, Log: l, Caller: headerCaller})
	t.Cleanup(srv.Close)
	get := func(path string) (int, []byte) {
		t.Helper()
		req, _ := http.NewRequest(http.MethodGet, srv.URL+path, nil)
		req.Header.Set(callerHeader, "o")
		resp, err := srv.Client().Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, err := io.ReadAll(resp.Body)
		if err != nil {
			t.Fatal(err)
		}
		return resp.StatusCode, b
	}
	const none = "is not a parameter of this endpoint, which takes none"
	const sizes = "is not a parameter of this endpoint, whose parameters are first, second"
	const malformed = `is not name=value pairs joined by "&", each escaped as a URL's query is`
	const size = "must be a tree size: a decimal integer >= 0, without sign or leading zeros"
	id := "rcpt_" + strings.Repeat("0", 26)
	for _, tt := range []struct {
		path string
		want []receipt.FieldError
	}{
		{"/api/v4/log/consistency?first=0&second=1&bogus=2", []receipt.FieldError{{Field: "bogus", Rule: "unknown", Message: sizes}}},
		{"/api/v4/log/consistency?second=1&b=1&a=1&a=2", []receipt.FieldError{
			{Field: "first", Rule: "required", Message: "is required: a tree size"},
			{Field: "a", Rule: "unknown", Message: sizes}, {Field: "b", Rule: "unknown", Message: sizes}}},
		{"/api/v4/log?first=1", []receipt.FieldError{{Field: "first", Rule: "unknown", Message: none}}},
		{"/api/v4/receipt/" + id + "?format=text", []receipt.FieldError{{Field: "format", Rule: "unknown", Message: none}}},
		{"/api/v4/receipt/" + id + "/proof?size=2", []receipt.FieldError{{Field: "size", Rule: "unknown", Message: none}}},
		{"/api/v4/log/consistency?first=0&second=1&%zz", []receipt.FieldError{{Field: "(query)", Rule: "malformed", Message: malformed}}},
		{"/api/v4/log/consistency?first=0;second=1", []receipt.FieldError{
			{Field: "first", Rule: "required", Message: "is required: a tree size"},
			{Field: "second", Rule: "required", Message: "is required: a tree size"},
			{Field: "(query)", Rule: "malformed", Message: malformed}}},
		{"/api/v4/log?a=%", []receipt.FieldError{{Field: "(query)", Rule: "malformed", Message: malformed}}},
		// A size is written one way: "01", "+1" and "-0" are not 1 and 0.
		{"/api/v4/log/consistency?first=0&second=01", []receipt.FieldError{{Field: "second", Rule: "type", Message: size}}},
		{"/api/v4/log/consistency?first=-0&second=1", []receipt.FieldError{{Field: "first", Rule: "type", Message: size}}},
		{"/api/v4/log/consistency?first=%2B0&second=%2B1", []receipt.FieldError{
			{Field: "first", Rule: "type", Message: size}, {Field: "second", Rule: "type", Message: size}}},
		{"/api/v4/log/consistency?first=00&second=1", []receipt.FieldError{{Field: "first", Rule: "type", Message: size}}},
	} {
		status, body := get(tt.path)
		var p receipt.Error
		if err := json.Unmarshal(body, &p); err != nil || status != http.StatusBadRequest {
			t.Errorf("GET %s = %d %s, want a 400 problem", tt.path, status, body)
			continue
		}
		if diff := cmp.Diff(tt.want, p.Errors); diff != "" || p.Code != "invalid_request" {
			t.Errorf("GET %s: code %q, field errors (-want +got):\n%s", tt.path, p.Code, diff)
		}
	}
	for _, path := range []string{"/api/v4/log", "/api/v4/log/consistency?first=0&second=1"} {
		if status, body := get(path); status != http.StatusOK {
			t.Errorf("GET %s = %d %s, want 200", path, status, body)
		}
	}
}

// TestHandler_verifyQueryParameters: POST verify_receipt takes no query
// parameter, and refuses one as the GET endpoints do, before it reads the
// body, rather than verify as if it were not there.
func TestHandler_verifyQueryParameters(t *testing.T) {
	f := newFixture(t)
	const none = "is not a parameter of this endpoint, which takes none"
	const malformed = `is not name=value pairs joined by "&", each escaped as a URL's query is`
	body := `{"receipt":` + string(f.shared.JSON) + `}`
	for _, tt := range []struct {
		query string
		want  []receipt.FieldError
	}{
		{"?input=x", []receipt.FieldError{{Field: "input", Rule: "unknown", Message: none}}},
		{"?now=0;", []receipt.FieldError{{Field: "(query)", Rule: "malformed", Message: malformed}}},
	} {
		resp, got := f.do(t, http.MethodPost, receipt.VerifyPath+tt.query, "", body)
		var p receipt.Error
		if err := json.Unmarshal(got, &p); err != nil || resp.StatusCode != http.StatusBadRequest {
			t.Errorf("POST %s%s = %d %s, want a 400 problem", receipt.VerifyPath, tt.query, resp.StatusCode, got)
			continue
		}
		if diff := cmp.Diff(tt.want, p.Errors); diff != "" || p.Code != "invalid_request" {
			t.Errorf("POST %s%s: code %q, field errors (-want +got):\n%s", receipt.VerifyPath, tt.query, p.Code, diff)
		}
	}
}
