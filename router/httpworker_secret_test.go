package router_test

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/vouchkit/vouch/router"
)

// TestHTTPWorker_errorsHideURLSecrets checks that the errors of an
// HTTPWorker, which a run shows its caller, name the worker's URL
// without the password of its user info or its query (a function key
// such as ?code=...).
func TestHTTPWorker_errorsHideURLSecrets(t *testing.T) {
	failing := httptest.NewServer(router.NewWorkerHandler(router.WorkerFunc(func(context.Context, *router.Job) (*router.Result, error) {
		return nil, errors.New("model overloaded")
	})))
	defer failing.Close()
	malformed := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.Write([]byte(`{"verdict":`))
	}))
	defer malformed.Close()
	closed := httptest.NewServer(http.NotFoundHandler())
	closed.Close()

	withSecrets := func(base string) string {
		return strings.Replace(base, "http://", "http://user:hunter2@", 1) + "/work?code=sekrit"
	}
	for name, url := range map[string]string{
		"non-2xx":   withSecrets(failing.URL),
		"malformed": withSecrets(malformed.URL),
		"transport": withSecrets(closed.URL),
		"bad URL":   "http://user:hunter2@[::1/work?code=sekrit",
	} {
		_, err := router.HTTPWorker(url).Work(context.Background(), sampleJob(t))
		if err == nil {
			t.Errorf("%s: no error", name)
			continue
		}
		for _, secret := range []string{"hunter2", "sekrit"} {
			if strings.Contains(err.Error(), secret) {
				t.Errorf("%s: the error shows %q: %v", name, secret, err)
			}
		}
		var rw *router.RemoteWorkerError
		if errors.As(err, &rw) && (strings.Contains(rw.URL, "hunter2") || strings.Contains(rw.URL, "sekrit")) {
			t.Errorf("%s: RemoteWorkerError.URL = %q, want it without the password and the query", name, rw.URL)
		}
	}
}
