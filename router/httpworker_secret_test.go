package router_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
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

// TestHTTPWorker_errorsHideEchoedSecrets checks that a worker (or a proxy
// before it) that echoes the request in its error answer does not put the
// headers' values, the URL's password or its query in the error, which a
// run shows its caller: in a problem body's title, code or detail, or in
// a body that is no problem.
func TestHTTPWorker_errorsHideEchoedSecrets(t *testing.T) {
	echo := func(r *http.Request) string {
		return "saw " + r.Header.Get("Authorization") + " " + r.Header.Get("X-Worker-Key") + " ?" + r.URL.RawQuery + " " + r.URL.Query().Get("code") +
			" token " + strings.TrimPrefix(r.Header.Get("Authorization"), "Bearer ")
	}
	for name, h := range map[string]http.HandlerFunc{
		"problem": func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "application/problem+json")
			w.WriteHeader(http.StatusBadRequest)
			json.NewEncoder(w).Encode(map[string]any{"title": echo(r), "status": 400, "code": echo(r), "detail": echo(r)})
		},
		"HTML": func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "text/html")
			w.WriteHeader(http.StatusBadGateway)
			fmt.Fprintf(w, "<html><body>%s</body></html>", echo(r))
		},
		"a page cut inside a secret": func(w http.ResponseWriter, r *http.Request) {
			w.WriteHeader(http.StatusBadGateway)
			fmt.Fprintf(w, "%s%s", strings.Repeat(".", 200-len("saw Bearer tok-012")), echo(r))
		},
	} {
		t.Run(name, func(t *testing.T) {
			srv := httptest.NewServer(h)
			defer srv.Close()
			url := strings.Replace(srv.URL, "http://", "http://user:hunter2@", 1) + "/work?code=sekrit&region=eu"
			w := router.HTTPWorker(url, router.WithWorkerHeader("Authorization", "Bearer tok-0123456789"),
				router.WithWorkerHeader("X-Worker-Key", "wk-abcdef"))
			_, err := w.Work(context.Background(), sampleJob(t))
			var rw *router.RemoteWorkerError
			if !errors.As(err, &rw) {
				t.Fatalf("err = %v, want a *RemoteWorkerError", err)
			}
			for _, secret := range []string{"tok-012", "wk-abcdef", "sekrit", "hunter2"} {
				if strings.Contains(err.Error(), secret) {
					t.Errorf("the error shows %q: %v", secret, err)
				}
			}
		})
	}
}
