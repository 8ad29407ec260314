package trustmcp_test

import (
	"bytes"
	"context"
	"crypto/ed25519"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/go-json-experiment/json/jsontext"
	"github.com/google/go-cmp/cmp"

	"github.com/vouchkit/vouch/receipt"
	"github.com/vouchkit/vouch/trust/trustmcp"
)

// TestVerifyReceipt_everyDoor runs the same receipt texts through the three
// doors of verification, receipt.Verifier, POST /api/v4/verify_receipt and
// the MCP tool verify_receipt over Streamable HTTP, each text sent as raw
// bytes as a client wrote it: the three answers are the same, whether the
// text is the receipt as issued, another spelling of it, or a rewritten
// number that the canonical form would round back to the signed one.
func TestVerifyReceipt_everyDoor(t *testing.T) {
	now := time.Date(2026, 5, 1, 12, 0, 0, 0, time.UTC)
	clock := func() time.Time { return now }
	signer, err := receipt.NewEd25519Signer(ed25519.NewKeyFromSeed(bytes.Repeat([]byte{7}, ed25519.SeedSize)))
	if err != nil {
		t.Fatal(err)
	}
	v, err := receipt.NewVerifier([]receipt.PublicKey{signer.Public()})
	if err != nil {
		t.Fatal(err)
	}
	is := &receipt.Issuer{Signer: signer, Store: &receipt.MemStore{}, Now: clock}
	out, err := is.Issue(context.Background(), receipt.Params{
		Request: receipt.Request{Mode: receipt.DeliveryInline, Include: receipt.Include{PolicySnapshot: true, RouterTraceRefs: true},
			TTL: "30d", Visibility: receipt.VisibilityPrivate},
		Mode: "validation", TaskType: "math", Input: "What is 17 * 3?", Output: json.RawMessage(`"51"`),
		Status: "VALID", Confidence: 0.9, Reasons: []string{"3 of 3 runs agree"},
		Policy: &receipt.PolicySnapshot{Tier: "safe", Consensus: receipt.PolicyConsensus{Replicas: 3, Strategy: "majority"}},
		Refs:   &receipt.Refs{Sessions: []int64{1 << 53, 2}, Tasks: []string{"t1", "t2"}, RouterTraceIDs: []string{}},
		Owner:  "demo",
	})
	if err != nil {
		t.Fatal(err)
	}
	issued := string(out.JSON)
	quoted, _ := json.Marshal(issued)
	var doc any
	dec := json.NewDecoder(strings.NewReader(issued))
	dec.UseNumber()
	if err := dec.Decode(&doc); err != nil {
		t.Fatal(err)
	}
	indented, _ := json.MarshalIndent(doc, "", "    ") // another member order is not needed: indent is enough to leave canonical form
	spaced := jsontext.Value(issued)
	if err := spaced.Format(jsontext.SpaceAfterColon(true), jsontext.SpaceAfterComma(true)); err != nil {
		t.Fatal(err)
	}
	pythonStyle := string(spaced) // as Python's json.dumps separates members

	texts := map[string]string{
		"as issued":                     issued,
		"a string holding it":           string(quoted),
		"indented":                      string(indented),
		"as json.dumps writes it":       pythonStyle,
		"escaped characters":            strings.Replace(issued, `"VALID"`, `"\u0056ALID"`, 1),
		"session 2^53 edited to 2^53+1": strings.Replace(issued, "9007199254740992", "9007199254740993", 1),
		"2^53+1 in a spaced text":       strings.Replace(pythonStyle, "9007199254740992", "9007199254740993", 1),
		"fraction in replicas":          strings.Replace(issued, `"replicas":3`, `"replicas":2.5`, 1),
		"status rewritten":              strings.Replace(issued, `"VALID"`, `"INVALID"`, 1),
		"a server's error answer": `{"type":"urn:vouch:problem:payment_required","title":"Payment Required","status":402,` +
			`"detail":"this route takes a payment","code":"payment_required"}`,
	}

	httpDoor := httptest.NewServer(&receipt.Handler{Verifier: v, Now: clock})
	t.Cleanup(httpDoor.Close)
	srv, err := trustmcp.NewServer(trustmcp.Config{Caller: newFixture(t).svc, Receipts: &trustmcp.StoreReceipts{Verifier: v, Now: clock}})
	if err != nil {
		t.Fatal(err)
	}
	mcpDoor := statelessHTTP(t, srv)

	for name, text := range texts {
		t.Run(name, func(t *testing.T) {
			res, _ := v.Verify([]byte(text), receipt.Originals{}, now)
			viaVerifier := roundTrip(t, receipt.NewVerifyResponse(res))

			var viaHTTP receipt.VerifyResponse
			post(t, httpDoor.URL+receipt.VerifyPath, `{"receipt":`+text+`}`, &viaHTTP)

			var call struct {
				Result struct {
					IsError bool `json:"isError"`
					Content []struct {
						Text string `json:"text"`
					} `json:"content"`
					StructuredContent receipt.VerifyResponse `json:"structuredContent"`
				} `json:"result"`
			}
			post(t, mcpDoor.URL, `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"verify_receipt","arguments":{"receipt":`+text+`}}}`, &call)
			if call.Result.IsError {
				t.Fatalf("verify_receipt answered a tool error")
			}
			if diff := cmp.Diff(viaVerifier, viaHTTP); diff != "" {
				t.Errorf("HTTP differs from receipt.Verifier (-verifier +HTTP):\n%s", diff)
			}
			if diff := cmp.Diff(viaVerifier, call.Result.StructuredContent); diff != "" {
				t.Errorf("MCP differs from receipt.Verifier (-verifier +MCP):\n%s", diff)
			}
			wantValid := map[string]bool{"as issued": true, "a string holding it": true, "indented": true,
				"as json.dumps writes it": true, "escaped characters": true}[name]
			if viaVerifier.Valid != wantValid {
				t.Errorf("valid = %v, want %v: %+v", viaVerifier.Valid, wantValid, viaVerifier.Checks)
			}
			if wantAsIssued := name == "as issued" || name == "a string holding it"; viaVerifier.AsIssued != wantAsIssued {
				t.Errorf("as_issued = %v, want %v", viaVerifier.AsIssued, wantAsIssued)
			}
			if name == "a server's error answer" {
				const want = "is an error answer of a server (an RFC 9457 problem), not a receipt: 402 Payment Required (payment_required): this route takes a payment"
				if c := viaVerifier.Checks[0]; c.Status != receipt.CheckFailed || len(c.Errors) != 1 || c.Errors[0].Rule != receipt.RuleErrorAnswer || c.Errors[0].Message != want {
					t.Errorf("schema check %+v, want failed with rule %s: %s", c, receipt.RuleErrorAnswer, want)
				}
				if len(call.Result.Content) == 0 || call.Result.Content[0].Text != "not valid: the receipt argument "+want {
					t.Errorf("MCP text %+v, want it to say the argument %s", call.Result.Content, want)
				}
			}
			if strings.Contains(name, "2^53+1") || strings.Contains(name, "fraction") {
				if c := viaVerifier.Checks[0]; c.Status != receipt.CheckFailed || len(c.Errors) != 1 || c.Errors[0].Rule != "number" {
					t.Errorf("schema check %+v, want failed with rule number", c)
				}
			}
		})
	}

	// A receipt that is neither an object nor a string is the caller's
	// mistake on both doors: a 400 naming receipt, a tool error naming
	// the argument (a valid:false answer naming (body) was the defect).
	resp, err := http.Post(httpDoor.URL+receipt.VerifyPath, "application/json", strings.NewReader(`{"receipt":7}`))
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusBadRequest || !strings.Contains(string(body), `"field":"receipt"`) {
		t.Errorf("HTTP, a number as receipt: %d %s; want a 400 naming receipt", resp.StatusCode, body)
	}
	var call struct {
		Result struct {
			IsError bool `json:"isError"`
			Content []struct {
				Text string `json:"text"`
			} `json:"content"`
		} `json:"result"`
	}
	post(t, mcpDoor.URL, `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"verify_receipt","arguments":{"receipt":7}}}`, &call)
	if !call.Result.IsError || len(call.Result.Content) == 0 || !strings.Contains(call.Result.Content[0].Text, "receipt") {
		t.Errorf("MCP, a number as receipt: %+v; want a tool error naming receipt", call.Result)
	}
}

// post sends body to url and decodes the 200 answer into v.
func post(t *testing.T, url, body string, v any) []byte {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, url, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(resp.Body)
	if err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("POST %s: %d %s (%v)", url, resp.StatusCode, data, err)
	}
	if err := json.Unmarshal(data, v); err != nil {
		t.Fatalf("POST %s: %s: %v", url, data, err)
	}
	return data
}

// roundTrip returns v as a client reads it: encoded and decoded again.
func roundTrip(t *testing.T, v receipt.VerifyResponse) receipt.VerifyResponse {
	t.Helper()
	data, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	var out receipt.VerifyResponse
	if err := json.Unmarshal(data, &out); err != nil {
		t.Fatal(err)
	}
	return out
}
