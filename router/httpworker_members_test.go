package router_test

import (
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/vouchkit/vouch/router"
)

// TestHTTPWorker_repeatedMembers checks that a worker's result giving a
// member twice, by the same name or by names that differ in case only
// (which encoding/json reads as one field, keeping the last), is a
// malformed response and no vote; a result giving each once is read.
func TestHTTPWorker_repeatedMembers(t *testing.T) {
	tests := []struct {
		name, body string
		wantErr    bool
	}{
		{"each member once", `{"verdict":"VALID","confidence":0.9}`, false},
		{"verdict twice", `{"verdict":"INVALID","confidence":0.9,"verdict":"VALID"}`, true},
		{"verdict and Verdict", `{"verdict":"INVALID","Verdict":"VALID","confidence":0.9}`, true},
		{"a step's member twice", `{"verdict":"VALID","steps":[{"description":"a","description":"b"}]}`, true},
		// An output may nest as deep as its author likes (the engine's own
		// workers' may): deeper than any request may is still an answer.
		{"an output 300 levels deep", `{"verdict":"VALID","output":` + strings.Repeat("[", 300) + strings.Repeat("]", 300) + `}`, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				w.Header().Set("Content-Type", "application/json")
				io.WriteString(w, tt.body)
			}))
			defer srv.Close()
			res, err := router.HTTPWorker(srv.URL).Work(t.Context(), sampleJob(t))
			switch {
			case tt.wantErr && !errors.Is(err, router.ErrMalformedResponse):
				t.Errorf("Work = %+v, %v; want an error wrapping ErrMalformedResponse", res, err)
			case tt.wantErr && res != nil:
				t.Errorf("result %+v alongside an error, want nil", res)
			case tt.wantErr && errors.As(err, new(*router.Error)):
				t.Errorf("Work = %v: a worker's malformed result reads as a problem of the request", err)
			case !tt.wantErr && (err != nil || res.Verdict != router.VerdictValid):
				t.Errorf("Work = %+v, %v; want verdict VALID", res, err)
			}
		})
	}
}
