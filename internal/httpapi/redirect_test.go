package httpapi_test

import (
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/vouchkit/vouch/internal/httpapi"
)

// TestSameOrigin checks that a client made by SameOrigin refuses a
// redirect to another host with ErrRedirect, hands one on the same
// origin to the caller's CheckRedirect, and leaves the caller's client
// as it was.
func TestSameOrigin(t *testing.T) {
	other := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {}))
	defer other.Close()
	elsewhere := strings.Replace(other.URL, "127.0.0.1", "localhost", 1)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/away":
			http.Redirect(w, r, elsewhere+"/", http.StatusFound)
		case "/here":
			http.Redirect(w, r, "/done", http.StatusFound)
		}
	}))
	defer srv.Close()

	errMine := errors.New("the caller's policy")
	var asked []string
	hc := &http.Client{CheckRedirect: func(req *http.Request, _ []*http.Request) error {
		asked = append(asked, req.URL.Path)
		return errMine
	}}
	c := httpapi.SameOrigin(hc)

	if _, err := c.Get(srv.URL + "/away"); !errors.Is(err, httpapi.ErrRedirect) {
		t.Errorf("redirect to another host: error %v, want ErrRedirect", err)
	}
	if _, err := c.Get(srv.URL + "/here"); !errors.Is(err, errMine) {
		t.Errorf("redirect on the same origin: error %v, want the caller's", err)
	}
	if len(asked) != 1 || asked[0] != "/done" {
		t.Errorf("the caller's CheckRedirect saw %q, want only /done", asked)
	}
	if _, err := hc.Get(srv.URL + "/away"); !errors.Is(err, errMine) {
		t.Errorf("the caller's client: error %v, want its own policy", err)
	}
}
