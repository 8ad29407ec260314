package main

import (
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/google/jsonschema-go/jsonschema"

	"github.com/vouchkit/vouch/x402"
	"github.com/vouchkit/vouch/x402/evm"
)

// validateJSON checks instance against schema, as a discovery service
// checks what a route declares.
func validateJSON(t *testing.T, schema, instance json.RawMessage) error {
	t.Helper()
	var s jsonschema.Schema
	if err := json.Unmarshal(schema, &s); err != nil {
		t.Fatalf("schema %s: %v", schema, err)
	}
	rs, err := s.Resolve(nil)
	if err != nil {
		t.Fatalf("resolving schema: %v", err)
	}
	var v any
	if err := json.Unmarshal(instance, &v); err != nil {
		t.Fatalf("instance %s: %v", instance, err)
	}
	return rs.Validate(v)
}

// TestRun_x402RoutesDescribeThemselves: every x402 route of the server
// answers 402 with Cache-Control: no-store, its description and media
// type, and a bazaar extension whose info satisfies its schema; its
// example request, paid, is served, and the real answer satisfies the
// output schema the route declares.
func TestRun_x402RoutesDescribeThemselves(t *testing.T) {
	t.Parallel()
	base, _, _ := startServer(t)
	prices, err := demoPrices(defaultPayTo)
	if err != nil {
		t.Fatal(err)
	}
	payer, err := evm.NewPayer(strings.Repeat("47", 32))
	if err != nil {
		t.Fatal(err)
	}
	paying := &http.Client{Transport: &x402.Transport{Payer: payer}}
	for _, p := range prices {
		t.Run(p.method+" "+p.path, func(t *testing.T) {
			d := p.discovery
			if d == nil {
				t.Fatal("the route has no Discovery")
			}
			var body io.Reader
			if p.method == http.MethodPost {
				body = strings.NewReader(string(d.Input))
			}
			req, _ := http.NewRequestWithContext(t.Context(), p.method, base+p.path, body)
			req.Header.Set("Content-Type", "application/json")
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
			if resp.StatusCode != http.StatusPaymentRequired || resp.Header.Get("Cache-Control") != "no-store" {
				t.Fatalf("unpaid: %d, Cache-Control %q; want 402, no-store", resp.StatusCode, resp.Header.Get("Cache-Control"))
			}
			terms, err := x402.ReadPaymentRequired(resp)
			if err != nil {
				t.Fatal(err)
			}
			if terms.Resource == nil || terms.Resource.Description == "" || terms.Resource.MimeType != "application/json" {
				t.Errorf("resource = %+v, want a description and application/json", terms.Resource)
			}
			var ext struct{ Info, Schema json.RawMessage }
			if err := json.Unmarshal(terms.Extensions[x402.ExtensionBazaar], &ext); err != nil {
				t.Fatalf("extensions.bazaar: %v", err)
			}
			if err := validateJSON(t, ext.Schema, ext.Info); err != nil {
				t.Errorf("bazaar info does not satisfy its schema: %v", err)
			}

			if p.method == http.MethodPost {
				body = strings.NewReader(string(d.Input))
			}
			req, _ = http.NewRequestWithContext(t.Context(), p.method, base+p.path, body)
			req.Header.Set("Content-Type", "application/json")
			resp, err = paying.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			defer resp.Body.Close()
			answer, _ := io.ReadAll(resp.Body)
			if resp.StatusCode != http.StatusOK {
				t.Fatalf("paid example: %d %s, want 200", resp.StatusCode, answer)
			}
			if err := validateJSON(t, d.OutputSchema, answer); err != nil {
				t.Errorf("the answer does not satisfy the declared output schema: %v\n%s", err, answer)
			}
		})
	}
}
