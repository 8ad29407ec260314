package httpapi_test

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/vouchkit/vouch/internal/httpapi"
	"github.com/vouchkit/vouch/internal/uncleantest"
)

// answer holds the members of a problem the tests compare.
type answer struct {
	Status                 int
	Code, Detail, Instance string
}

// TestServer_uncleanPath: a path with a doubled slash or a dot segment
// is answered 404 with a problem naming the clean path (and, for a
// doubled slash between segments, asking whether a value was left
// empty), not the redirect
// of http.ServeMux, which a client that does not follow redirects takes
// for an empty answer; the endpoint does not run. A clean path is served.
func TestServer_uncleanPath(t *testing.T) {
	srv := newServer(t, httpapi.Config{Name: "test",
		Endpoints: []httpapi.Endpoint{{Method: http.MethodPost, Path: "/api/v1/echo", Access: httpapi.Key, Prepare: echo}}})
	for path, why := range map[string]string{
		"//api/v1/echo":       "a doubled slash",
		"/api//v1/echo":       "a doubled slash (was a value between two slashes, such as an id, left empty?)",
		"/api/v1/echo//":      "a doubled slash",
		"/api/v1/./echo":      `a "." or ".." segment`,
		"/api/x/../v1/echo":   `a "." or ".." segment`,
		"/api/v1/../v1//echo": "a doubled slash (was a value between two slashes, such as an id, left empty?)",
	} {
		status, location, body := uncleantest.Post(t, srv.URL, path, `{}`, "Authorization", "Bearer "+testKey)
		var p answer
		if err := json.Unmarshal([]byte(body), &p); err != nil {
			t.Fatalf("POST %s: %d %s (%v)", path, status, body, err)
		}
		clean := "/api/v1/echo"
		if strings.HasSuffix(path, "/") {
			clean += "/"
		}
		want := answer{404, "not_found",
			"no route " + path + ": the path has " + why + "; did you mean " + clean + "?", path}
		if diff := cmp.Diff(want, p); diff != "" || status != http.StatusNotFound || location != "" {
			t.Errorf("POST %s = %d (Location %q) (-want +got):\n%s", path, status, location, diff)
		}
	}
	if status, _, body := uncleantest.Post(t, srv.URL, "/api/v1/echo", `{}`, "Authorization", "Bearer "+testKey); status != http.StatusOK {
		t.Errorf("POST /api/v1/echo = %d %s, want 200", status, body)
	}
}

// TestRefuseUncleanPaths: a ServeMux behind RefuseUncleanPaths answers
// a path that is not clean as a Server does, and serves the others.
func TestRefuseUncleanPaths(t *testing.T) {
	mux := http.NewServeMux()
	mux.HandleFunc("POST /mcp", func(w http.ResponseWriter, _ *http.Request) { io.WriteString(w, "served") })
	srv := httptest.NewServer(httpapi.RefuseUncleanPaths(mux))
	t.Cleanup(srv.Close)
	base := srv.URL
	if status, location, body := uncleantest.Post(t, base, "//mcp", `{}`); status != http.StatusNotFound || location != "" ||
		!strings.Contains(body, `"detail":"no route //mcp: the path has a doubled slash; did you mean /mcp?"`) ||
		!strings.Contains(body, `"request_id":"req_`) {
		t.Errorf("POST //mcp = %d (Location %q) %s, want 404 naming /mcp, with a request_id", status, location, body)
	}
	if status, _, body := uncleantest.Post(t, base, "/mcp", `{}`); status != http.StatusOK || body != "served" {
		t.Errorf("POST /mcp = %d %s, want 200 served", status, body)
	}
}
