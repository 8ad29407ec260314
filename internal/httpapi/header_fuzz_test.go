package httpapi

import (
	"errors"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"
	"time"
)

// FuzzBearerToken reads any Authorization header: a token BearerToken
// returns is the header's own, without surrounding space, and reads
// back from "Bearer <token>"; KeyAuthenticator names the caller of
// exactly the header whose token is a key, and refuses the others with
// ErrNoCredentials when the header is empty and ErrBadCredentials when
// not.
func FuzzBearerToken(f *testing.F) {
	for _, s := range []string{"Bearer k", "bearer  k ", "Basic a2V5", "Bearer", "Bearer ", "k", "BEARER k k", "Bearer\tk"} {
		f.Add(s)
	}
	auth := KeyAuthenticator(map[string]string{"k": "alice", "k k": ""})
	f.Fuzz(func(t *testing.T, header string) {
		if strings.ContainsAny(header, "\r\n\x00") {
			return // not a header value
		}
		r := httptest.NewRequest(http.MethodPost, "/", nil)
		r.Header.Set("Authorization", header)
		token, ok := BearerToken(r)
		if ok {
			if token == "" || token != strings.TrimSpace(token) || !strings.HasSuffix(strings.TrimSpace(header), token) {
				t.Fatalf("BearerToken(%q) = %q", header, token)
			}
			again := httptest.NewRequest(http.MethodPost, "/", nil)
			again.Header.Set("Authorization", "Bearer "+token)
			if t2, ok2 := BearerToken(again); !ok2 || t2 != token {
				t.Fatalf("BearerToken(%q) = %q, and of \"Bearer %s\" %q, %v", header, token, token, t2, ok2)
			}
		} else if token != "" {
			t.Fatalf("BearerToken(%q) = %q with ok false", header, token)
		}
		caller, err := auth(r)
		switch {
		case ok && token == "k":
			if caller != "alice" || err != nil {
				t.Fatalf("%q: caller %q, %v", header, caller, err)
			}
		case ok && token == "k k":
			if !strings.HasPrefix(caller, "key:") || err != nil {
				t.Fatalf("%q: caller %q, %v", header, caller, err)
			}
		case caller != "":
			t.Fatalf("%q: caller %q", header, caller)
		case header == "":
			if !errors.Is(err, ErrNoCredentials) {
				t.Fatalf("no header: %v", err)
			}
		case !errors.Is(err, ErrBadCredentials):
			t.Fatalf("%q: %v, want ErrBadCredentials", header, err)
		}
	})
}

// FuzzRetryAfter reads any Retry-After of a remote server's answer, as
// the Client does between attempts: a pause is never negative, a number
// of seconds is that pause (at most 2^20 s), and the backoff that honours
// it is the pause, or else within its bounds.
func FuzzRetryAfter(f *testing.F) {
	for _, s := range []string{"7", " 120 ", "-1", "99999999999999999999", "Wed, 21 Oct 2015 07:28:00 GMT", "Fri, 31 Dec 9999 23:59:59 GMT", "soon", "+5", ""} {
		f.Add(s, uint8(0))
	}
	f.Fuzz(func(t *testing.T, value string, attempt uint8) {
		if strings.ContainsAny(value, "\r\n\x00") {
			return
		}
		resp := &http.Response{StatusCode: http.StatusServiceUnavailable, Header: http.Header{}}
		resp.Header.Set("Retry-After", value)
		wait, ok := retryAfter(resp)
		if wait < 0 || !ok && wait != 0 {
			t.Fatalf("retryAfter(%q) = %v, %v", value, wait, ok)
		}
		if n, err := strconv.ParseInt(strings.TrimSpace(value), 10, 64); err == nil && n >= 0 && (!ok || wait != time.Duration(min(n, 1<<20))*time.Second) {
			t.Fatalf("retryAfter(%q) = %v, %v; want %d s", value, wait, ok, min(n, 1<<20))
		}
		const lo, hi = 100 * time.Millisecond, 2 * time.Second
		d := backoff(lo, hi, int(attempt%64), resp)
		if ok && (d > wait || wait-d > time.Second) || !ok && (d < lo/2 || d > hi) { // a date's pause shrinks as time passes
			t.Fatalf("backoff with Retry-After %q (%v, %v) = %v", value, wait, ok, d)
		}
	})
}
