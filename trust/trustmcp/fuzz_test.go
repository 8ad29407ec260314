package trustmcp

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/vouchkit/vouch/x402"
	"github.com/vouchkit/vouch/x402/evm"
)

// arguments are the names of the tools' arguments, which an
// ArgumentError must name.
var arguments = []string{"input", "claimed_result", "spec", "policy", "receipt", "objective", "dispute_context", "claim", "mode", "replicas", "answer", "tolerance"}

// FuzzArguments decodes tool arguments as the SDK hands them over (any
// JSON object) and builds the trust and router requests from them: it
// must never panic, must accept only requests the trust service accepts,
// and must name a known argument when it refuses.
func FuzzArguments(f *testing.F) {
	for _, s := range []string{
		`{"claimed_result":"17 * 3 = 51"}`,
		`{"claimed_result":{"answer":51},"input":{"q":"17 * 3"},"spec":"integer product","policy":"oracle","receipt":"inline"}`,
		`{"claimed_result":null,"input":42}`,
		`{"claimed_result":1e400,"receipt":"detached"}`,
		`{"input":{"kind":"array","items":[1,2]},"claimed_result":[1],"dispute_context":"x","policy":"adaptive"}`,
		`{"objective":"17 * 3","policy":"fast"}`,
		`{"input":"how many?","answer":"number","tolerance":{"absolute":0.5,"relative":0.01}}`,
		`{"input":"x","answer":"number","tolerance":{"absolute":-1}}`,
		`{"claim":"17 * 3 = 51","mode":"realtime","replicas":5}`,
		`{"receipt":"\"{}\""}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		check := func(tool string, err error) {
			if err == nil {
				return
			}
			var ae *ArgumentError
			if !errors.As(err, &ae) {
				t.Fatalf("%s: %v is not an *ArgumentError", tool, err)
			}
			if arg, _, _ := strings.Cut(ae.Argument, "."); !slices.Contains(arguments, arg) { // tolerance.absolute: a member
				t.Fatalf("%s: error names %q, not an argument", tool, ae.Argument)
			}
		}
		var v ValidateClaimArgs
		if json.Unmarshal(data, &v) == nil {
			req, err := v.request()
			check("validate_claim", err)
			if err == nil && req.Validate() != nil {
				t.Fatalf("validate_claim built an invalid request: %v", req.Validate())
			}
		}
		var a ArbitrateArgs
		if json.Unmarshal(data, &a) == nil {
			req, err := a.request()
			check("arbitrate", err)
			if err == nil && req.Validate() != nil {
				t.Fatalf("arbitrate built an invalid request: %v", req.Validate())
			}
		}
		var d DelegateTaskArgs
		if json.Unmarshal(data, &d) == nil {
			req, err := d.request()
			check("delegate_task", err)
			if err == nil && req.Validate() != nil {
				t.Fatalf("delegate_task built an invalid request: %v", req.Validate())
			}
		}
		var fc FactcheckArgs
		if json.Unmarshal(data, &fc) == nil {
			req, err := fc.request()
			check("factcheck", err)
			if err == nil && req.Validate() != nil {
				t.Fatalf("factcheck built an invalid request: %v", req.Validate())
			}
		}
		if raw, err := receiptArgument(data); err == nil && !json.Valid(raw) {
			t.Fatalf("verify_receipt passed on %q", raw)
		} else if err != nil {
			check("verify_receipt", err)
		}
	})
}

// FuzzCanonicalJSON canonicalizes tool arguments as Paywall names the
// call a payment paid for: the result of valid JSON is valid JSON of the
// same value, and canonicalizing it again changes nothing, so that a
// retry written with other spacing or key order names the same call.
func FuzzCanonicalJSON(f *testing.F) {
	for _, s := range []string{
		`{"claimed_result":"17 * 3 = 51"}`,
		` { "b" : [1, 2.50, 1e400], "a" : {"y":null,"x":true} } `,
		`{"n":12345678901234567890123}`,
		``,
		`null`,
		`{"a":1}{"b":2}`,
		`"\u00e9\ud83d\ude00"`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		c := canonicalJSON(data)
		if again := canonicalJSON(json.RawMessage(c)); again != c {
			t.Fatalf("canonicalJSON is not idempotent: %q then %q", c, again)
		}
		var v any
		if json.Unmarshal(data, &v) != nil || v == nil {
			return
		}
		var w any
		if err := json.Unmarshal([]byte(c), &w); err != nil {
			t.Fatalf("canonicalJSON(%q) = %q: %v", data, c, err)
		}
		a, _ := json.Marshal(v)
		b, _ := json.Marshal(w)
		if string(a) != string(b) {
			t.Fatalf("canonicalJSON(%q) = %q, another value", data, c)
		}
	})
}

// FuzzPaymentTerms reads the terms of a tool result as a client receives
// it from any server (text, and structured content when the second input
// is JSON): it must never panic, and what it returns is version 2 terms
// with at least one offer.
func FuzzPaymentTerms(f *testing.F) {
	terms := `{"x402Version":2,"error":"payment required","resource":{"url":"mcp://tool/t"},"accepts":[{"scheme":"exact","network":"eip155:84532","amount":"5000","asset":"0x036CbD53842c5426634e7929541eC2318f3dCF7e","payTo":"0x000000000000000000000000000000000000dEaD","maxTimeoutSeconds":60}]}`
	for _, s := range [][2]string{
		{`{"x402/error":{"code":402,"message":"payment required","data":` + terms + `}}`, ``},
		{`not json`, terms},
		{``, `{"x402/error":{"code":402,"data":` + terms + `}}`},
		{`{"x402/error":{"code":402,"data":{"x402Version":2,"accepts":[]}}}`, `null`},
		{`{"x402Version":1,"accepts":[{}]}`, `[1,2]`},
	} {
		f.Add([]byte(s[0]), []byte(s[1]))
	}
	f.Fuzz(func(t *testing.T, text, structured []byte) {
		res := &mcp.CallToolResult{IsError: true, Content: []mcp.Content{&mcp.TextContent{Text: string(text)}}}
		var v any
		if json.Unmarshal(structured, &v) == nil {
			res.StructuredContent = v
		}
		pr, err := PaymentTerms(res)
		switch {
		case err != nil && pr != nil:
			t.Fatalf("terms %+v with error %v", pr, err)
		case err == nil && (pr == nil || pr.X402Version != 2 || len(pr.Accepts) == 0):
			t.Fatalf("PaymentTerms accepted %+v", pr)
		}
	})
}

// verifyingFacilitator counts the payments it verifies as valid.
type verifyingFacilitator struct {
	evm.Facilitator
	valid int
}

func (f *verifyingFacilitator) Verify(ctx context.Context, p *x402.PaymentPayload, r x402.PaymentRequirements) (*x402.VerifyResponse, error) {
	vr, err := f.Facilitator.Verify(ctx, p, r)
	if err == nil && vr.IsValid {
		f.valid++
	}
	return vr, err
}

// FuzzPaywallPayment sends any JSON as a tool call's payment
// (_meta["x402/payment"], as the SDK decodes it) and any arguments: the
// Paywall never panics, runs the tool only for a payment the facilitator
// verified, answers a repeat of a paid call only with the result it
// bought and its settlement, and answers every payment it refuses with a
// tool error that carries the terms.
func FuzzPaywallPayment(f *testing.F) {
	offer, err := evm.USDC("base-sepolia", "0x000000000000000000000000000000000000dEaD", "$0.005")
	if err != nil {
		f.Fatal(err)
	}
	payer, err := evm.NewPayer("4c0883a69102937d6231471b5dbb6204fe5129617082792ae468d01a3f362318")
	if err != nil {
		f.Fatal(err)
	}
	proof, err := payer.Pay(context.Background(), offer)
	if err != nil {
		f.Fatal(err)
	}
	signed, err := json.Marshal(x402.PaymentPayload{X402Version: x402.Version2, Accepted: offer, Payload: proof.Payload})
	if err != nil {
		f.Fatal(err)
	}
	f.Add(signed, []byte(`{"claimed_result":"17 * 3 = 51"}`))
	f.Add(bytes.Replace(signed, []byte(`"value":"5000"`), []byte(`"value":"5001"`), 1), []byte(`{"claimed_result":"x"}`))
	f.Add([]byte(`{"x402Version":1,"scheme":"exact","network":"base-sepolia","payload":{"signature":"0x00"}}`), []byte(`{}`))
	f.Add([]byte(`{"x402Version":2,"accepted":{"scheme":"exact","network":"eip155:84532","amount":"5000"},"payload":null,"extensions":{"payment-identifier":{"info":{"id":1}}}}`), []byte(`null`))
	f.Add([]byte(`"a string"`), []byte(`[1]`))
	fac := &verifyingFacilitator{}
	pay, err := Paywall(PaywallConfig{Facilitator: fac, Prices: map[string]x402.Price{"validate_claim": {Accepts: []x402.PaymentRequirements{offer}}}})
	if err != nil {
		f.Fatal(err)
	}
	ran := 0
	h := pay(func(context.Context, string, mcp.Request) (mcp.Result, error) {
		ran++
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "VALID"}}}, nil
	})
	f.Fuzz(func(t *testing.T, payment, args []byte) {
		var v any
		if json.Unmarshal(payment, &v) != nil {
			return
		}
		ran, fac.valid = 0, 0
		call := &mcp.CallToolRequest{Params: &mcp.CallToolParamsRaw{Name: "validate_claim", Arguments: args, Meta: mcp.Meta{MetaPayment: v}}}
		res, err := h(context.Background(), "tools/call", call)
		if err != nil {
			t.Fatalf("%s: protocol error %v", payment, err)
		}
		ctr, ok := res.(*mcp.CallToolResult)
		switch {
		case !ok:
			t.Fatalf("%s: result %T", payment, res)
		case ran > 0 && fac.valid == 0:
			t.Fatalf("%s: the tool ran on a payment the facilitator did not verify", payment)
		case ran == 0 && !ctr.IsError && ctr.Meta[MetaPaymentResponse] == nil: // else a paid result delivered again
			t.Fatalf("%s: no tool ran, and the answer is no error: %+v", payment, ctr)
		case ran == 0 && fac.valid == 0 && ctr.Meta[MetaPaymentResponse] == nil:
			if _, err := PaymentTerms(ctr); err != nil {
				t.Fatalf("%s: refused without terms: %v", payment, err)
			}
		}
	})
}
