package trust_test

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"

	"golang.org/x/time/rate"

	"github.com/vouchkit/vouch/router"
	"github.com/vouchkit/vouch/router/routertest"
	"github.com/vouchkit/vouch/trust"
)

// TestHandler_detachedReceiptNoOneFetches: a call made without a
// credential of its own (a trial call, with a key or without) that asks
// for a detached receipt that no credential could fetch (private, or
// shared or public with no counterparty) is a 400 naming receipt.mode,
// before any work; inline, or shared with counterparties, it is answered,
// as is a detached receipt asked with a key on the normal route.
func TestHandler_detachedReceiptNoOneFetches(t *testing.T) {
	priv, _, _ := feedbackBook(t)
	workers := routertest.NewRecorder(honest(0.9))
	svc, err := trust.New(newEngine(t, workers, workers, workers), trust.WithSigningKey(priv))
	if err != nil {
		t.Fatal(err)
	}
	srv := newServer(t, svc, trust.WithTrialLimit(router.TrialLimit{Rate: rate.Inf}))
	post := func(path, key, receiptBlock string) (int, string) {
		t.Helper()
		body := `{"mode":"validation","policy":"fast","task":{"input":"2+2","claimed_result":"4"},"receipt":` + receiptBlock + `}`
		req, err := http.NewRequest(http.MethodPost, srv.URL+path, bytes.NewReader([]byte(body)))
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set("Content-Type", "application/json")
		if key != "" {
			req.Header.Set("Authorization", "Bearer "+key)
		}
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer res.Body.Close()
		data, _ := io.ReadAll(res.Body)
		return res.StatusCode, string(data)
	}
	const detached = `{"mode":"detached"}`
	for _, tc := range []struct{ key, block string }{
		{"", detached}, {testKey, detached},
		{"", `{"mode":"detached","visibility":"shared"}`}, {"", `{"mode":"detached","visibility":"public"}`},
	} {
		key := tc.key
		before := workers.Calls.Load()
		status, body := post(trust.TrialCallPath, key, tc.block)
		var p struct {
			Errors []struct{ Field, Rule string }
		}
		_ = json.Unmarshal([]byte(body), &p)
		if status != http.StatusBadRequest || len(p.Errors) != 1 || p.Errors[0].Field != "receipt.mode" || p.Errors[0].Rule != "fetchable" {
			t.Errorf("a trial call (key %q) asking the detached receipt %s: %d %s, want 400 naming receipt.mode, rule fetchable", key, tc.block, status, body)
		}
		if n := workers.Calls.Load() - before; n != 0 {
			t.Errorf("the refused trial call (key %q) ran %d jobs", key, n)
		}
	}
	for _, tc := range []struct{ path, key, block string }{
		{trust.TrialCallPath, "", `{"mode":"inline"}`},
		{trust.TrialCallPath, "", `{"mode":"detached","visibility":"shared","counterparties":["acme"]}`},
		{trust.CallPath, testKey, detached},
	} {
		if status, body := post(tc.path, tc.key, tc.block); status != http.StatusOK || !strings.Contains(body, `"receipt"`) {
			t.Errorf("%s (key %q) with receipt %s: %d %.200s, want 200 with the receipt", tc.path, tc.key, tc.block, status, body)
		}
	}
}
