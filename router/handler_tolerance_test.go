package router_test

import (
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/vouchkit/vouch/router"
	"github.com/vouchkit/vouch/router/routertest"
)

// TestHandler_unknownToleranceMember: a member of consensus.tolerance the
// router does not know is a 400 naming it, beside the request's other
// field errors, and nothing runs; without the check, {"abs": 1} read as
// exact equality. Members encoding/json matches (any case) still count.
func TestHandler_unknownToleranceMember(t *testing.T) {
	rec := routertest.NewRecorder(routertest.Answer(18))
	var sessions []router.Session
	for i := range 3 {
		sessions = append(sessions, router.Session{ID: router.SessionID(i + 1), Worker: rec})
	}
	h, err := router.NewHandler(newEngine(t, sessions), router.WithAuthenticator(router.KeyAuthenticator(map[string]string{"k": "tests"})))
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(h)
	defer srv.Close()
	for _, c := range []struct {
		name, path, consensus string
		fields                []string // nil: 200
	}{
		{"misspelt bound", "/api/v3/delegate", `{"replicas":3,"aggregation":"median","tolerance":{"abs":1}}`, []string{"consensus.tolerance.abs"}},
		{"two unknown beside a known one", "/api/v3/delegate", `{"replicas":3,"aggregation":"median","tolerance":{"relative":0.1,"abs":1,"Rel":2}}`,
			[]string{"consensus.tolerance.Rel", "consensus.tolerance.abs"}},
		{"beside a negative bound", "/api/v3/delegate", `{"replicas":3,"aggregation":"median_of_means","tolerance":{"absolute":-1,"within":1}}`,
			[]string{"consensus.tolerance.absolute", "consensus.tolerance.within"}},
		{"escaped name", "/api/v3/delegate", `{"replicas":3,"aggregation":"median","tolerance":{"a\u0062s":1}}`, []string{"consensus.tolerance.abs"}},
		{"odd name", "/api/v3/delegate", `{"replicas":3,"aggregation":"median","tolerance":{"a.b":1}}`, []string{`consensus.tolerance["a.b"]`}},
		{"on a validation", "/api/v3/validate", `{"replicas":3,"tolerance":{"abs":1}}`, []string{"consensus.tolerance", "consensus.tolerance.abs"}},
		{"on a fact check", "/api/v3/factcheck", `{"replicas":3,"tolerance":{"abs":1}}`, []string{"consensus.tolerance", "consensus.tolerance.abs"}},
		{"known members in another case", "/api/v3/delegate", `{"replicas":3,"aggregation":"median","tolerance":{"Absolute":1,"RELATIVE":0}}`, nil},
		{"null", "/api/v3/delegate", `{"replicas":3,"aggregation":"median","tolerance":null}`, nil},
		{"empty", "/api/v3/delegate", `{"replicas":3,"aggregation":"median","tolerance":{}}`, nil},
	} {
		t.Run(c.name, func(t *testing.T) {
			before := rec.Calls.Load()
			var body string
			switch c.path {
			case "/api/v3/delegate":
				body = `{"objective":"how many?","consensus":` + c.consensus + `}`
			case "/api/v3/validate":
				body = `{"claim":{"type":"summary","output":"x"},"policy":{},"consensus":` + c.consensus + `}`
			default:
				body = `{"claim":"c","consensus":` + c.consensus + `}`
			}
			status, v := postV3(t, srv.URL, c.path, body)
			if c.fields == nil {
				if status != http.StatusOK {
					t.Fatalf("status %d, %v; want 200", status, v)
				}
				return
			}
			var got []string
			errs, _ := v["errors"].([]any)
			for _, e := range errs {
				got = append(got, e.(map[string]any)["field"].(string))
			}
			slices.Sort(got)
			if status != http.StatusBadRequest || v["code"] != "invalid_request" {
				t.Errorf("status %d, code %v; want 400 invalid_request", status, v["code"])
			}
			if diff := cmp.Diff(c.fields, got); diff != "" {
				t.Errorf("fields (-want +got):\n%s", diff)
			}
			if n := rec.Calls.Load() - before; n != 0 {
				t.Errorf("%d runs, want none", n)
			}
		})
	}
}

// TestHandler_toleranceBounds: a relative tolerance above 1 (which lets a
// number of the other sign agree) and one too large for a float64 are a
// 400 naming consensus.tolerance.relative and saying what is allowed.
func TestHandler_toleranceBounds(t *testing.T) {
	srv := keyServer(t, threeAnswering(18))
	for _, c := range []struct{ relative, want string }{
		{"1.5", "must be at most 1"},
		{"1e999", "must be a finite number"},
	} {
		status, v := postV3(t, srv.URL, "/api/v3/delegate", `{"objective":"how many?","consensus":{"replicas":3,"aggregation":"median","tolerance":{"relative":`+c.relative+`}}}`)
		errs, _ := v["errors"].([]any)
		if status != http.StatusBadRequest || len(errs) != 1 {
			t.Fatalf("relative %s: status %d, %v; want 400 with one field error", c.relative, status, v)
		}
		e := errs[0].(map[string]any)
		if msg, _ := e["message"].(string); e["field"] != "consensus.tolerance.relative" || !strings.Contains(msg, c.want) {
			t.Errorf("relative %s: error %v; want consensus.tolerance.relative, %q", c.relative, e, c.want)
		}
	}
}

// TestHandler_medianOfMeansHugeNumbers: five workers answering 1.7e308
// under median_of_means answer that number, not a 500.
func TestHandler_medianOfMeansHugeNumbers(t *testing.T) {
	var sessions []router.Session
	for i := range 5 {
		sessions = append(sessions, router.Session{ID: router.SessionID(i + 1), Worker: routertest.Answer(1.7e308)})
	}
	srv := keyServer(t, sessions)
	status, v := postV3(t, srv.URL, "/api/v3/delegate", `{"objective":"how many?","consensus":{"replicas":5,"aggregation":"median_of_means"}}`)
	if status != http.StatusOK {
		t.Fatalf("status %d, %v; want 200", status, v)
	}
	c, _ := v["consensus"].(map[string]any)
	if c["aggregate"] != 1.7e308 || c["agreement"] != 1.0 {
		t.Errorf("consensus %v; want aggregate 1.7e308, agreement 1", c)
	}
}

func threeAnswering(x any) []router.Session {
	var sessions []router.Session
	for i := range 3 {
		sessions = append(sessions, router.Session{ID: router.SessionID(i + 1), Worker: routertest.Answer(x)})
	}
	return sessions
}

// TestHandler_replicasZero: replicas 0 (or none) is a 400 naming
// consensus.replicas and the values it allows.
func TestHandler_replicasZero(t *testing.T) {
	srv := keyServer(t, threeAnswering(18))
	for _, c := range []string{`{"replicas":0}`, `{}`} {
		status, v := postV3(t, srv.URL, "/api/v3/delegate", `{"objective":"how many?","consensus":`+c+`}`)
		errs, _ := v["errors"].([]any)
		if status != http.StatusBadRequest || len(errs) != 1 {
			t.Fatalf("%s: status %d, %v; want 400 with one field error", c, status, v)
		}
		e := errs[0].(map[string]any)
		if msg, _ := e["message"].(string); e["field"] != "consensus.replicas" || !strings.Contains(msg, "1, 3, 5") {
			t.Errorf("%s: error %v; want consensus.replicas naming 1, 3, 5", c, e)
		}
	}
}

// keyServer serves an engine of sessions over loopback, to the key "k".
func keyServer(t *testing.T, sessions []router.Session) *httptest.Server {
	t.Helper()
	h, err := router.NewHandler(newEngine(t, sessions), router.WithAuthenticator(router.KeyAuthenticator(map[string]string{"k": "tests"})))
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	return srv
}
