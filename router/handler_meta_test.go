package router_test

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/vouchkit/vouch/router"
	"github.com/vouchkit/vouch/router/routertest"
	"github.com/vouchkit/vouch/x402"
)

func TestHandler_ping(t *testing.T) {
	srv := newTestServer(t, &fakeService{})
	got := send(t, "GET", srv.URL+"/api/v1/ping", "", "Authorization", "", "Content-Type", "")
	if got.status != http.StatusOK || !jsonSame(got.body, `{"message":"pong"}`) {
		t.Errorf("GET /api/v1/ping without credentials = %d %s, want 200 {\"message\":\"pong\"}", got.status, got.body)
	}
	if r := send(t, "HEAD", srv.URL+"/api/v1/ping", ""); r.status != http.StatusOK || len(r.body) != 0 {
		t.Errorf("HEAD /api/v1/ping = %d %q, want 200 without a body", r.status, r.body)
	}
	r := send(t, "POST", srv.URL+"/api/v1/ping", "{}")
	if r.status != http.StatusMethodNotAllowed || r.header.Get("Allow") != "GET, HEAD" {
		t.Errorf("POST /api/v1/ping = %d, Allow %q; want 405 with Allow: GET, HEAD", r.status, r.header.Get("Allow"))
	}

	c, err := router.NewClient(srv.URL, router.WithRetry(router.RetryPolicy{}))
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Ping(context.Background()); err != nil {
		t.Errorf("Client.Ping without a key: %v", err)
	}
	// The public router has no trial ping: a trial Client pings the
	// normal route.
	if err := c.Ping(router.WithVariant(context.Background(), router.VariantTrial)); err != nil {
		t.Errorf("Client.Ping in the trial variant: %v", err)
	}
}

func TestClient_Ping_wrongAnswer(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.Write([]byte(`{"message":"pang"}`))
	}))
	t.Cleanup(srv.Close)
	c := newTestClient(t, srv.URL)
	if err := c.Ping(context.Background()); !errors.Is(err, router.ErrMalformedResponse) {
		t.Errorf("Ping answered pang: error %v, want ErrMalformedResponse", err)
	}
}

func TestHandler_about(t *testing.T) {
	plain := newTestServer(t, &fakeService{})
	got := send(t, "GET", plain.URL+"/api/v1/about", "", "Authorization", "")
	if got.status != http.StatusOK {
		t.Fatalf("GET /api/v1/about without credentials = %d %s, want 200", got.status, got.body)
	}
	var a router.About
	if err := json.Unmarshal(got.body, &a); err != nil {
		t.Fatal(err)
	}
	if a.Service != "vouch router" || a.Version == "" || a.Prices != nil ||
		!cmp.Equal(a.Variants, []router.Variant{router.VariantNormal, router.VariantTrial}) {
		t.Errorf("about without x402 = %+v, want service \"vouch router\", a version, variants normal and trial, no prices", a)
	}

	svc := &fakeService{}
	ps := newPaidServer(t, svc)
	priced := newTestServer(t, svc, router.WithX402(func(h http.Handler) http.Handler { return h }),
		router.WithX402Prices(ps.prices), router.WithServiceInfo("demo router", "1.2.3"))
	c := newTestClient(t, priced.URL)
	about, err := c.About(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if about.Service != "demo router" || about.Version != "1.2.3" ||
		!cmp.Equal(about.Variants, []router.Variant{router.VariantNormal, router.VariantTrial, router.VariantX402}) {
		t.Errorf("about = %+v, want demo router 1.2.3 with the three variants", about)
	}
	var want []router.RoutePrice
	for _, rt := range router.Routes() {
		if rt.Variant == router.VariantX402 {
			p := ps.prices[rt.Method+" "+rt.Path]
			want = append(want, router.RoutePrice{Method: rt.Method, Path: rt.Path, Description: string(rt.Op), Accepts: p.Accepts})
		}
	}
	if diff := cmp.Diff(want, about.Prices); diff != "" {
		t.Errorf("prices (-want +got):\n%s", diff)
	}
}

// TestHandler_about_pricePatterns checks that a route is priced by the
// pattern x402.Middleware would pick for it, that a route left unpriced
// is left out, that a priced pattern naming one method and path outside
// the router (the trust call) is listed after the router's routes while
// wildcard and prefix patterns are not, and that version 1 network names
// are given in CAIP-2.
func TestHandler_about_pricePatterns(t *testing.T) {
	offer := func(network, amount string) x402.PaymentRequirements {
		return x402.PaymentRequirements{Scheme: "exact", Network: network, Amount: amount, Asset: "0xA", PayTo: "0xB", MaxTimeoutSeconds: 60}
	}
	prices := map[string]x402.Price{
		"/api/v1/x402/":              {Accepts: []x402.PaymentRequirements{offer("base-sepolia", "1000")}},
		"POST /api/v1/x402/validate": {Accepts: []x402.PaymentRequirements{offer("eip155:84532", "2000")}},
		"POST /api/v4/trust":         {Accepts: []x402.PaymentRequirements{offer("eip155:84532", "9")}},
		"GET /api/v4/receipt/{id}":   {Accepts: []x402.PaymentRequirements{offer("eip155:84532", "7")}},
		"/api/v9/":                   {Accepts: []x402.PaymentRequirements{offer("eip155:84532", "8")}},
	}
	h, err := router.NewHandler(&fakeService{}, router.WithX402(func(h http.Handler) http.Handler { return h }), router.WithX402Prices(prices))
	if err != nil {
		t.Fatal(err)
	}
	w := httptest.NewRecorder()
	h.ServeHTTP(w, httptest.NewRequest("GET", "/api/v1/about", nil))
	var a router.About
	if err := json.Unmarshal(w.Body.Bytes(), &a); err != nil {
		t.Fatal(err)
	}
	got := map[string]string{}
	for _, p := range a.Prices {
		if len(p.Accepts) != 1 || p.Accepts[0].Network != "eip155:84532" {
			t.Errorf("%s %s: accepts %+v, want one offer on eip155:84532", p.Method, p.Path, p.Accepts)
			continue
		}
		got[p.Method+" "+p.Path] = p.Accepts[0].Amount
	}
	want := map[string]string{
		"POST /api/v1/x402/delegate":   "1000",
		"POST /api/v1/x402/validate":   "2000",
		"POST /api/v1/x402/factcheck":  "1000",
		"POST /api/v1/x402/fact-check": "1000",
		"GET /api/v1/x402/ping":        "1000",
		"POST /api/v4/trust":           "9", // another handler's route, named exactly
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("prices by route (-want +got):\n%s", diff)
	}
	if last := a.Prices[len(a.Prices)-1]; last.Path != "/api/v4/trust" {
		t.Errorf("last price is %s %s, want the other handler's route after the router's", last.Method, last.Path)
	}
}

func TestNewHandler_badPrices(t *testing.T) {
	one := map[string]x402.Price{"GET /api/v1/x402/ping": {}}
	for name, opts := range map[string][]router.HandlerOption{
		"prices without x402": {router.WithX402Prices(one)},
		"bad pattern": {router.WithX402(func(h http.Handler) http.Handler { return h }),
			router.WithX402Prices(map[string]x402.Price{"GET /api/{x": {}})},
	} {
		if _, err := router.NewHandler(&fakeService{}, opts...); err == nil {
			t.Errorf("%s: NewHandler succeeded, want an error", name)
		}
	}
}

// failingStatus is a Service whose Status fails.
type failingStatus struct {
	router.Service
	err error
}

func (f failingStatus) Status(context.Context) (*router.Status, error) { return nil, f.err }

func TestHandler_status(t *testing.T) {
	now := time.Date(2026, 7, 1, 12, 0, 0, 0, time.UTC)
	ws := []router.Worker{routertest.Verdict(router.VerdictTrue), routertest.Verdict(router.VerdictTrue), routertest.Verdict(router.VerdictTrue)}
	sessions := routertest.Sessions(1, 2, ws...)
	sessions[2].Tiers = []router.Tier{router.TierOracle}
	e, err := router.NewEngine(sessions, router.WithEngineClock(func() time.Time { return now }))
	if err != nil {
		t.Fatal(err)
	}
	srv := newTestServer(t, e, router.WithTrialLimit(router.TrialLimit{Rate: 1000, Burst: 100}))

	if r := send(t, "GET", srv.URL+"/api/v1/status", "", "Authorization", ""); r.status != http.StatusUnauthorized {
		t.Errorf("GET /api/v1/status without credentials = %d, want 401", r.status)
	}
	send(t, "GET", srv.URL+"/api/v1/ping", "")
	send(t, "GET", srv.URL+"/api/v1/ping", "")
	body := `{"claim":"water is wet","session_pool":["1",2]}`
	send(t, "POST", srv.URL+"/api/v1/fact-check", `{"claim":"water is wet","session_pool":["1",2,3]}`)
	send(t, "POST", srv.URL+"/api/v1/trial/factcheck", body, "Authorization", "")
	send(t, "POST", srv.URL+"/api/v1/factcheck", `{}`) // 400, but admitted
	if r := send(t, "POST", srv.URL+"/api/v1/factcheck?x=1", body); r.status != http.StatusBadRequest {
		t.Errorf("POST with a query = %d, want 400", r.status)
	}
	if r := send(t, "POST", srv.URL+"/api/v1/factcheck", body, "Content-Type", "text/plain"); r.status != http.StatusUnsupportedMediaType {
		t.Errorf("POST of text/plain = %d, want 415", r.status)
	}

	c := newTestClient(t, srv.URL)
	st, err := c.Status(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	direct, err := e.Status(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(direct.Sessions, st.Sessions); diff != "" {
		t.Errorf("sessions over HTTP differ from the engine's (-engine +HTTP):\n%s", diff)
	}
	wantSessions := []router.SessionStatus{
		{ID: 1, Pool: "pool-0", Health: router.HealthHealthy},
		{ID: 2, Pool: "pool-1", Health: router.HealthHealthy},
		{ID: 3, Pool: "pool-0", Tiers: []router.Tier{router.TierOracle}, Health: router.HealthHealthy},
	}
	if diff := cmp.Diff(wantSessions, st.Sessions); diff != "" {
		t.Errorf("sessions (-want +got):\n%s", diff)
	}
	wantCalls := map[string]int64{}
	for _, rt := range router.Routes() {
		wantCalls[rt.Method+" "+rt.Path] = 0
	}
	wantCalls["GET /api/v1/ping"] = 2
	wantCalls["POST /api/v1/fact-check"] = 1
	wantCalls["POST /api/v1/trial/factcheck"] = 1
	wantCalls["POST /api/v1/factcheck"] = 3 // refused after admission, for its body, query or Content-Type
	wantCalls["GET /api/v1/status"] = 1     // this call; the refused one is not counted
	if diff := cmp.Diff(wantCalls, st.Calls); diff != "" {
		t.Errorf("calls (-want +got):\n%s", diff)
	}

	// A Service that does not report gives only the counts; a report
	// that fails is the answer.
	plain := newTestServer(t, &fakeService{})
	st, err = newTestClient(t, plain.URL).Status(context.Background())
	if err != nil || st.Sessions != nil || st.Calls["GET /api/v1/status"] != 1 {
		t.Errorf("status of a Service without a report = %+v (%v), want no sessions and one status call", st, err)
	}
	down := newTestServer(t, failingStatus{err: &router.Error{Status: 503, Code: "unavailable", Detail: "sessions unknown"}})
	_, err = newTestClient(t, down.URL, router.WithRetry(router.RetryPolicy{})).Status(context.Background())
	if p := new(router.Error); !errors.As(err, &p) || p.Status != 503 {
		t.Errorf("failing report: error %v, want the Service's 503", err)
	}
}

// TestHandler_status_withStatusCalls checks that the counts of another
// handler are added to the Handler's own, and summed where routes repeat.
func TestHandler_status_withStatusCalls(t *testing.T) {
	other := func() map[string]int64 { return map[string]int64{"POST /api/v4/trust": 3, "GET /api/v1/ping": 10} }
	srv := newTestServer(t, &fakeService{}, router.WithStatusCalls(other), router.WithStatusCalls(nil))
	send(t, "GET", srv.URL+"/api/v1/ping", "")
	st, err := newTestClient(t, srv.URL).Status(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if st.Calls["POST /api/v4/trust"] != 3 || st.Calls["GET /api/v1/ping"] != 11 || st.Calls["GET /api/v1/status"] != 1 {
		t.Errorf("calls = %v, want the trust call's 3, ping's 1 + 10, and this status call", st.Calls)
	}
}

// TestClient_Status_keyInEveryVariant checks that an x402 Client still
// sends its key to the status route, which takes one.
func TestClient_Status_keyInEveryVariant(t *testing.T) {
	srv := newTestServer(t, &fakeService{})
	c := newTestClient(t, srv.URL, router.WithClientVariant(router.VariantX402))
	if _, err := c.Status(context.Background()); err != nil {
		t.Errorf("x402 Client.Status: %v", err)
	}
}
