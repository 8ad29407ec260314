package pgstore_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/jackc/pgx/v5"

	"github.com/vouchkit/vouch/internal/proxytest"
	"github.com/vouchkit/vouch/pgstore"
	"github.com/vouchkit/vouch/router"
	"github.com/vouchkit/vouch/router/routertest"
	"github.com/vouchkit/vouch/trust"
)

// openBehindProxy opens a DB on a new schema through a proxy to the test
// database, which the test stops to take the database away.
func openBehindProxy(t *testing.T) (*pgstore.DB, *proxytest.Proxy) {
	t.Helper()
	dsn := databaseURL(t)
	u, err := url.Parse(dsn)
	if err != nil {
		t.Fatal(err)
	}
	schema := newSchemaName(t)
	direct, err := pgstore.Open(context.Background(), dsn, pgstore.WithSchema(schema))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if _, err := direct.Pool().Exec(context.Background(), "DROP SCHEMA "+pgx.Identifier{schema}.Sanitize()+" CASCADE"); err != nil {
			t.Errorf("dropping schema %s: %v", schema, err)
		}
		direct.Close()
	})
	p := proxytest.Start(t, u.Host)
	u.Host = p.Addr()
	db, err := pgstore.Open(context.Background(), u.String(), pgstore.WithSchema(schema), pgstore.WithQueryTimeout(2*time.Second))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(db.Close)
	return db, p
}

// TestIdempotencyStore_databaseDownIsUnavailable: a request with an
// Idempotency-Key to a router or trust handler whose idempotency store
// is in a database that went away is answered 503 unavailable, as
// docs/INTERFACE.md says of a store out of reach, and as a client
// retries; it was answered 500 internal error.
func TestIdempotencyStore_databaseDownIsUnavailable(t *testing.T) {
	db, proxy := openBehindProxy(t)
	workers := routertest.NewRecorder(routertest.Verdict(router.VerdictValid))
	engine, err := router.NewEngine(routertest.Sessions(1, 3, workers, workers, workers))
	if err != nil {
		t.Fatal(err)
	}
	rh, err := router.NewHandler(engine, router.WithIdempotency(db.Idempotency(), time.Hour))
	if err != nil {
		t.Fatal(err)
	}
	svc, err := trust.New(engine)
	if err != nil {
		t.Fatal(err)
	}
	th, err := trust.NewHandler(svc, trust.WithIdempotency(db.Idempotency(), time.Hour))
	if err != nil {
		t.Fatal(err)
	}
	routerSrv, trustSrv := httptest.NewServer(rh), httptest.NewServer(th)
	defer routerSrv.Close()
	defer trustSrv.Close()

	type answer struct {
		Status int
		Code   string
	}
	post := func(target, body, key string) answer {
		t.Helper()
		req, err := http.NewRequest(http.MethodPost, target, bytes.NewReader([]byte(body)))
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Idempotency-Key", key)
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer res.Body.Close()
		var p struct {
			Code string `json:"code"`
		}
		data, _ := io.ReadAll(res.Body)
		if res.StatusCode != http.StatusOK {
			json.Unmarshal(data, &p)
		}
		return answer{res.StatusCode, p.Code}
	}
	const (
		validate = `{"session_id":1,"request_id":"r1","claim":{"type":"summary","description":"summarize","output":"a summary"},"policy":{"tier":"safe","rules":["consistency"]}}`
		call     = `{"mode":"validation","policy":"fast","task":{"input":"2+2","claimed_result":"4"}}`
	)
	targets := []struct{ url, body string }{
		{routerSrv.URL + "/api/v2/trial/validate", validate},
		{trustSrv.URL + trust.TrialCallPath, call},
	}
	var got []answer
	for i, target := range targets {
		got = append(got, post(target.url, target.body, fmt.Sprint("up-", i)))
	}
	proxy.Stop()
	for i, target := range targets {
		got = append(got, post(target.url, target.body, fmt.Sprint("down-", i)))
	}
	want := []answer{{200, ""}, {200, ""}, {503, "unavailable"}, {503, "unavailable"}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("router and trust calls, the database up and then down (-want +got):\n%s", diff)
	}
}
