package chatworker

import (
	"net/http"
	"strings"
	"testing"
	"time"
)

// FuzzRetryAfter reads any Retry-After on any status: only a 429 or a 5xx
// has a pause; a pause is never negative; delay seconds are whole seconds
// of at most a day, read the same with white space around them; a date
// is a pause up to that date from before the call, 0 once it is past;
// anything else is no pause.
func FuzzRetryAfter(f *testing.F) {
	for _, s := range []string{
		"0", "3", "120", " 7 ", "86400", "86401", "-1", "-0", "+5", "007",
		"1.5", "1e3", "99999999999999999999", "soon", "",
		"Wed, 21 Oct 2015 07:28:00 GMT",                         // IMF-fixdate, past
		"Fri, 31 Dec 9999 23:59:59 GMT",                         // far ahead
		"Sunday, 06-Nov-94 08:49:37 GMT",                        // RFC 850
		"Sun Nov  6 08:49:37 1994",                              // ANSI C asctime
		"Wed, 21 Oct 2015 07:28:00 PST",                         // a zone HTTP does not allow
		"Wed, 32 Oct 2015 07:28:00 GMT",                         // no such day
		time.Now().Add(time.Hour).UTC().Format(http.TimeFormat), // an hour ahead
	} {
		for _, status := range []int{429, 503, 500, 400} {
			f.Add(status, s)
		}
	}
	f.Fuzz(func(t *testing.T, status int, header string) {
		resp := &http.Response{StatusCode: status, Header: http.Header{"Retry-After": {header}}}
		before := time.Now()
		d, ok := retryAfter(resp)
		switch {
		case !ok:
			if d != 0 {
				t.Fatalf("retryAfter(%d, %q) = %v, false; want 0 with false", status, header, d)
			}
		case status != http.StatusTooManyRequests && status < 500:
			t.Fatalf("retryAfter(%d, %q) = %v: a pause for a status that is not retried", status, header, d)
		case d < 0:
			t.Fatalf("retryAfter(%d, %q) = %v: a negative pause", status, header, d)
		}
		v := strings.TrimSpace(header)
		if date, err := http.ParseTime(v); err == nil {
			if !ok && (status == http.StatusTooManyRequests || status >= 500) {
				t.Fatalf("retryAfter(%d, %q): the HTTP date %v read as no pause", status, header, date)
			}
			if ok && d > max(date.Sub(before), 0) {
				t.Fatalf("retryAfter(%d, %q) = %v, beyond the date %v", status, header, d, date)
			}
			return
		}
		if ok && (d > 24*time.Hour || d%time.Second != 0) {
			t.Fatalf("retryAfter(%d, %q) = %v: delay seconds are whole seconds of at most a day", status, header, d)
		}
		resp.Header.Set("Retry-After", " "+v+"\t")
		if d2, ok2 := retryAfter(resp); d2 != d || ok2 != ok {
			t.Fatalf("retryAfter(%d, %q) = %v, %v but with white space around it %v, %v", status, header, d, ok, d2, ok2)
		}
	})
}
