package x402_test

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/jsonschema-go/jsonschema"

	"github.com/vouchkit/vouch/x402"
	"github.com/vouchkit/vouch/x402/evm"
)

// echoDiscovery describes the test route: a JSON body with a required
// string "text", answered with an object holding "echo".
var echoDiscovery = &x402.Discovery{
	Input:        json.RawMessage(`{"text":"hello"}`),
	InputSchema:  json.RawMessage(`{"type":"object","properties":{"text":{"type":"string","description":"what to echo"}},"required":["text"]}`),
	Output:       json.RawMessage(`{"echo":"hello"}`),
	OutputSchema: json.RawMessage(`{"type":"object","properties":{"echo":{"type":"string"}},"required":["echo"]}`),
}

// validate checks the instance against the schema, as a discovery service
// checks a bazaar extension's info against its schema.
func validate(t *testing.T, schema, instance json.RawMessage) error {
	t.Helper()
	var s jsonschema.Schema
	if err := json.Unmarshal(schema, &s); err != nil {
		t.Fatalf("schema: %v", err)
	}
	rs, err := s.Resolve(nil)
	if err != nil {
		t.Fatalf("resolving the schema: %v", err)
	}
	var v any
	if err := json.Unmarshal(instance, &v); err != nil {
		t.Fatal(err)
	}
	return rs.Validate(v)
}

// TestMiddleware_402DescribesTheRoute: a 402 answer carries
// Cache-Control: no-store, the resource's description and media type, the
// bazaar extension whose info satisfies its schema (with the route's
// input and output schemas where @x402/extensions puts them), and the
// version 1 outputSchema; a 402 refusing a proof too.
func TestMiddleware_402DescribesTheRoute(t *testing.T) {
	mw, err := x402.Middleware(x402.MiddlewareConfig{
		Facilitator: &evm.Facilitator{},
		Routes: map[string]x402.Price{
			"POST /paid": {Accepts: []x402.PaymentRequirements{offer(t)}, Description: "an echo", MimeType: "application/json", Discovery: echoDiscovery},
			"GET /ping":  {Accepts: []x402.PaymentRequirements{offer(t)}, Discovery: &x402.Discovery{InputSchema: json.RawMessage(`{"type":"object"}`), OutputSchema: json.RawMessage(`{"type":"object"}`)}},
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(mw(http.HandlerFunc(echo)))
	defer srv.Close()

	for _, tc := range []struct {
		name, method, path, proof string
	}{
		{"no proof", http.MethodPost, "/paid", ""},
		{"tampered proof", http.MethodPost, "/paid", proof(t, 2, func(_ *x402.PaymentPayload, ep *evm.ExactPayload) { ep.Authorization.Value = "1" })},
		{"GET", http.MethodGet, "/ping", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			req, _ := http.NewRequestWithContext(t.Context(), tc.method, srv.URL+tc.path, strings.NewReader(`{"text":"hi"}`))
			if tc.proof != "" {
				req.Header.Set(x402.HeaderPaymentSignature, tc.proof)
			}
			resp, err := srv.Client().Do(req)
			if err != nil {
				t.Fatal(err)
			}
			defer resp.Body.Close()
			if resp.StatusCode != http.StatusPaymentRequired || resp.Header.Get("Cache-Control") != "no-store" {
				t.Fatalf("status %d, Cache-Control %q; want 402 and no-store", resp.StatusCode, resp.Header.Get("Cache-Control"))
			}
			terms, err := x402.DecodePaymentRequired(resp.Header.Get(x402.HeaderPaymentRequired))
			if err != nil {
				t.Fatal(err)
			}
			var ext struct {
				Info   json.RawMessage `json:"info"`
				Schema json.RawMessage `json:"schema"`
			}
			if err := json.Unmarshal(terms.Extensions[x402.ExtensionBazaar], &ext); err != nil {
				t.Fatalf("extensions.bazaar: %v in %s", err, terms.Extensions[x402.ExtensionBazaar])
			}
			if err := validate(t, ext.Schema, ext.Info); err != nil {
				t.Errorf("bazaar info does not satisfy its schema: %v", err)
			}
			var v1 x402.PaymentRequiredV1
			body, _ := io.ReadAll(resp.Body)
			if err := json.Unmarshal(body, &v1); err != nil || len(v1.Accepts) != 1 {
				t.Fatalf("version 1 body %s: %v", body, err)
			}
			var os struct {
				Input  map[string]any  `json:"input"`
				Output json.RawMessage `json:"output"`
			}
			if err := json.Unmarshal(v1.Accepts[0].OutputSchema, &os); err != nil || os.Input["method"] != tc.method || os.Input["discoverable"] != true {
				t.Errorf("version 1 outputSchema %s, want the input of a %s", v1.Accepts[0].OutputSchema, tc.method)
			}
			if tc.method != http.MethodPost {
				return
			}
			if d := cmp.Diff(&x402.ResourceInfo{URL: srv.URL + "/paid", Description: "an echo", MimeType: "application/json"}, terms.Resource); d != "" {
				t.Errorf("resource (-want +got):\n%s", d)
			}
			var got struct {
				Info struct {
					Input struct {
						Method, BodyType string
						Body             json.RawMessage
					}
					Output struct{ Example json.RawMessage }
				}
				Schema struct {
					Properties struct {
						Input struct {
							Properties struct{ Body json.RawMessage }
						}
						Output struct {
							Properties struct{ Example json.RawMessage }
						}
					}
				}
			}
			if err := json.Unmarshal(terms.Extensions[x402.ExtensionBazaar], &got); err != nil {
				t.Fatal(err)
			}
			want := []string{"POST", "json", string(echoDiscovery.Input), string(echoDiscovery.Output), string(echoDiscovery.InputSchema), string(echoDiscovery.OutputSchema)}
			have := []string{got.Info.Input.Method, got.Info.Input.BodyType, string(got.Info.Input.Body), string(got.Info.Output.Example),
				string(got.Schema.Properties.Input.Properties.Body), string(got.Schema.Properties.Output.Properties.Example)}
			if d := cmp.Diff(want, have); d != "" {
				t.Errorf("bazaar method, bodyType, input, output, input schema, output schema (-want +got):\n%s", d)
			}
			if string(os.Output) != string(echoDiscovery.OutputSchema) {
				t.Errorf("version 1 outputSchema.output = %s, want the output schema", os.Output)
			}
		})
	}
}

// TestMiddleware_badDiscovery: a Discovery without schemas, with a schema
// that is not a JSON object, or with an unknown body type is a
// configuration error.
func TestMiddleware_badDiscovery(t *testing.T) {
	for name, d := range map[string]*x402.Discovery{
		"no input schema":  {OutputSchema: json.RawMessage(`{}`)},
		"no output schema": {InputSchema: json.RawMessage(`{}`)},
		"schema not JSON":  {InputSchema: json.RawMessage(`{`), OutputSchema: json.RawMessage(`{}`)},
		"schema an array":  {InputSchema: json.RawMessage(`[]`), OutputSchema: json.RawMessage(`{}`)},
		"body type":        {BodyType: "xml", InputSchema: json.RawMessage(`{}`), OutputSchema: json.RawMessage(`{}`)},
	} {
		_, err := x402.Middleware(x402.MiddlewareConfig{
			Facilitator: &evm.Facilitator{},
			Routes:      map[string]x402.Price{"POST /paid": {Accepts: []x402.PaymentRequirements{offer(t)}, Discovery: d}},
		})
		if err == nil || !strings.Contains(err.Error(), "Discovery") {
			t.Errorf("%s: err = %v, want a configuration error naming Discovery", name, err)
		}
	}
}
