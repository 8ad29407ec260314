package x402_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"

	"github.com/vouchkit/vouch/x402"
	"github.com/vouchkit/vouch/x402/evm"
)

// A route described for x402 discovery services: its 402 answers carry
// the bazaar extension, with the example request and the schemas.
func ExampleDiscovery() {
	offer, _ := evm.USDC("base-sepolia", "0x209693Bc6afc0C5328bA36FaF03C514EF312287C", "$0.001")
	mw, err := x402.Middleware(x402.MiddlewareConfig{
		Facilitator: &evm.Facilitator{},
		Routes: map[string]x402.Price{"POST /echo": {
			Accepts:     []x402.PaymentRequirements{offer},
			Description: "echoes a text",
			MimeType:    "application/json",
			Discovery: &x402.Discovery{
				Input:        json.RawMessage(`{"text":"hello"}`),
				InputSchema:  json.RawMessage(`{"type":"object","properties":{"text":{"type":"string"}},"required":["text"]}`),
				OutputSchema: json.RawMessage(`{"type":"object","properties":{"echo":{"type":"string"}}}`),
			},
		}},
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	srv := httptest.NewServer(mw(http.NotFoundHandler()))
	defer srv.Close()
	resp, err := http.Post(srv.URL+"/echo", "application/json", strings.NewReader(`{"text":"hi"}`))
	if err != nil {
		fmt.Println(err)
		return
	}
	resp.Body.Close()
	terms, _ := x402.ReadPaymentRequired(resp)
	var bazaar struct {
		Info struct {
			Input struct {
				Method string          `json:"method"`
				Body   json.RawMessage `json:"body"`
			} `json:"input"`
		} `json:"info"`
	}
	json.Unmarshal(terms.Extensions[x402.ExtensionBazaar], &bazaar)
	fmt.Println(resp.StatusCode, resp.Header.Get("Cache-Control"))
	fmt.Println(bazaar.Info.Input.Method, string(bazaar.Info.Input.Body))
	// Output:
	// 402 no-store
	// POST {"text":"hello"}
}
