package embedkey_test

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/vouchkit/vouch/router/embedkey"
)

// TestGrouper_Group_redirect checks that a redirect to another host is
// refused: the request carries the configured headers, which net/http
// would pass on to any host (it drops only Authorization and cookies).
func TestGrouper_Group_redirect(t *testing.T) {
	var leaked atomic.Value
	other := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		leaked.Store(r.Header.Get("Api-Key"))
		io.WriteString(w, `{"data":[{"index":0,"embedding":[1,0]},{"index":1,"embedding":[1,0]}]}`)
	}))
	defer other.Close()
	// Another host name for the same loopback address.
	elsewhere := strings.Replace(other.URL, "127.0.0.1", "localhost", 1)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		http.Redirect(w, r, elsewhere+"/v1/embeddings", http.StatusTemporaryRedirect)
	}))
	defer srv.Close()
	g := newGrouper(t, srv.URL, embedkey.Config{Headers: http.Header{"Api-Key": {"gateway-secret"}}})
	if _, err := g.Group(context.Background(), outputs("a", "b")); err == nil {
		t.Error("Group followed a redirect to another host: no error")
	} else if !strings.Contains(err.Error(), "redirect to another origin refused") || !strings.Contains(err.Error(), "after 1 attempt(s)") {
		t.Errorf("Group error %q, want the redirect refused after 1 attempt", err)
	}
	if v, _ := leaked.Load().(string); v != "" {
		t.Errorf("the other host got the header Api-Key: %q", v)
	}
}
