package pgstore_test

import (
	"bytes"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"golang.org/x/time/rate"

	"github.com/vouchkit/vouch/receipt"
	"github.com/vouchkit/vouch/router"
	"github.com/vouchkit/vouch/router/routertest"
	"github.com/vouchkit/vouch/trust"
)

// TestTrialCaller_unkeepableName: a TrialCaller that passes on what the
// client sent may name a request by bytes that are not valid UTF-8 (a
// header value may hold any byte above 0x7f) or that hold a NUL (a
// header it percent-decodes may). No receipt and no PostgreSQL text column holds such a
// name: the trust call ran and then failed 503 as its receipt was
// refused, and a request with an Idempotency-Key failed 500 in the
// shared idempotency store, every retry alike. Such a name is not taken:
// the request is served as its default caller, its address, on the
// router's trial route and the trust trial route alike, with the
// idempotency store, the trial limit and the receipts in PostgreSQL, and
// its retry is replayed.
func TestTrialCaller_unkeepableName(t *testing.T) {
	db := openDB(t)
	limiter, err := db.TrialLimiter(router.TrialLimit{Rate: rate.Inf})
	if err != nil {
		t.Fatal(err)
	}
	workers := routertest.NewRecorder(routertest.Verdict(router.VerdictValid))
	engine, err := router.NewEngine(routertest.Sessions(1, 3, workers, workers, workers))
	if err != nil {
		t.Fatal(err)
	}
	// The session header, percent-decoded when it can be.
	session := func(r *http.Request) string {
		s := r.Header.Get("X-Session")
		if d, err := url.PathUnescape(s); err == nil {
			return d
		}
		return s
	}
	rh, err := router.NewHandler(engine, router.WithRateLimiter(limiter), router.WithTrialCaller(session),
		router.WithIdempotency(db.Idempotency(), time.Hour))
	if err != nil {
		t.Fatal(err)
	}
	svc, err := trust.New(engine, trust.WithReceipts(&receipt.Issuer{Store: db.Receipts()}))
	if err != nil {
		t.Fatal(err)
	}
	th, err := trust.NewHandler(svc, trust.WithRateLimiter(limiter), trust.WithTrialCaller(session),
		trust.WithIdempotency(db.Idempotency(), time.Hour))
	if err != nil {
		t.Fatal(err)
	}
	routerSrv, trustSrv := httptest.NewServer(rh), httptest.NewServer(th)
	defer routerSrv.Close()
	defer trustSrv.Close()

	type answer struct {
		Status   int
		Replayed bool
	}
	post := func(target, body, session, key string) answer {
		t.Helper()
		req, err := http.NewRequest(http.MethodPost, target, bytes.NewReader([]byte(body)))
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Idempotency-Key", key)
		req.Header.Set("X-Session", session)
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer res.Body.Close()
		data, _ := io.ReadAll(res.Body)
		if res.StatusCode != http.StatusOK {
			t.Logf("%s: %d %.300s", target, res.StatusCode, data)
		}
		return answer{res.StatusCode, res.Header.Get(router.HeaderIdempotentReplayed) == "true"}
	}
	const (
		validate = `{"session_id":1,"request_id":"r1","claim":{"type":"summary","description":"summarize","output":"a summary"},"policy":{"tier":"safe","rules":["consistency"]}}`
		call     = `{"mode":"validation","policy":"fast","task":{"input":"2+2","claimed_result":"4"},"receipt":{"mode":"detached","visibility":"shared","counterparties":["acme"]}}`
	)
	for i, name := range []string{"s\xff", "s%00"} {
		for j, target := range []struct{ url, body string }{
			{routerSrv.URL + "/api/v2/trial/validate", validate},
			{trustSrv.URL + trust.TrialCallPath, call},
		} {
			key := fmt.Sprintf("k%d-%d", i, j)
			got := []answer{post(target.url, target.body, name, key), post(target.url, target.body, name, key)}
			want := []answer{{http.StatusOK, false}, {http.StatusOK, true}}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("%s, session %q: the first call and its retry (-want +got):\n%s", target.url, name, diff)
			}
		}
	}
}
