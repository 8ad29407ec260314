package httpapi_test

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/vouchkit/vouch/internal/httpapi"
	"github.com/vouchkit/vouch/problem"
)

// TestClient_Do_peerProblemBounded checks that the texts of a problem a
// server answers with, which become the error's text (and, through a
// remote worker, a run's error in the evidence), are cut to
// httpapi.MaxPeerText bytes, at a character boundary, however long the
// server made them, and its field errors to problem.MaxFieldErrors and
// a last one counting the others, as problem.Invalid lists them.
func TestClient_Do_peerProblemBounded(t *testing.T) {
	long := strings.Repeat("é", 1<<20) // 2 MiB, under the response limit
	errs := make([]problem.FieldError, 5000)
	for i := range errs {
		errs[i] = problem.FieldError{Field: "f", Rule: "r", Message: "m"}
	}
	body, err := json.Marshal(map[string]any{
		"status": 400, "title": long, "code": long, "detail": long, "request_id": long, "errors": errs,
	})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/problem+json")
		w.WriteHeader(http.StatusBadRequest)
		w.Write(body)
	}))
	defer srv.Close()
	c, err := httpapi.NewClient(httpapi.ClientConfig{Name: "test", BaseURL: srv.URL})
	if err != nil {
		t.Fatal(err)
	}
	err = c.Do(context.Background(), httpapi.Call{Op: "get", Method: "GET", Path: "/"}, nil)
	var p *problem.Details
	if !errors.As(err, &p) {
		t.Fatalf("error %v, want a *problem.Details", err)
	}
	for name, s := range map[string]string{"title": p.Title, "code": string(p.Code), "detail": p.Detail, "request_id": p.RequestID} {
		if len(s) > httpapi.MaxPeerText+len("…") || !utf8.ValidString(s) || !strings.HasPrefix(s, "éé") {
			t.Errorf("%s: %d bytes (valid UTF-8 %t), want the start of the text in at most %d bytes and valid UTF-8",
				name, len(s), utf8.ValidString(s), httpapi.MaxPeerText+len("…"))
		}
	}
	if len(p.Errors) > problem.MaxFieldErrors+1 {
		t.Errorf("%d field errors kept, want at most %d", len(p.Errors), problem.MaxFieldErrors+1)
	}
	if n := len(err.Error()); n > 4*httpapi.MaxPeerText {
		t.Errorf("error text is %d bytes, want at most %d", n, 4*httpapi.MaxPeerText)
	}
}
