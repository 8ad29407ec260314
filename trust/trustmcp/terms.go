package trustmcp

import (
	"encoding/json"
	"fmt"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/vouchkit/vouch/x402"
)

// PaymentRequired is what a tool result that asks for payment carries:
// the x402 terms, and the settlement when one failed.
type PaymentRequired struct {
	x402.PaymentRequired
	// Settlement is the failed settlement, when the payment was taken but
	// could not be settled.
	Settlement *x402.SettleResponse `json:"x402/payment-response,omitempty"`
}

// paymentError is the text of a tool result that asks for payment: the
// x402/error wrapper of the x402 MCP transport.
type paymentError struct {
	Error struct {
		Code    int              `json:"code"`
		Message string           `json:"message"`
		Data    *PaymentRequired `json:"data"`
	} `json:"x402/error"`
}

// terms is the tool result that asks for payment: isError, and the terms
// in content[0].text only, wrapped as {"x402/error":{"code":402,...}}.
// structuredContent stays empty: clients (the official TypeScript SDK
// among them) check it against the tool's output schema even on an error
// result, and the terms are not the tool's answer (see the package
// documentation).
func terms(accepts []x402.PaymentRequirements, res x402.ResourceInfo, reason string, sr *x402.SettleResponse) *mcp.CallToolResult {
	pr := &PaymentRequired{PaymentRequired: x402.PaymentRequired{
		X402Version: x402.Version2, Error: reason, Resource: &res,
		Accepts: make([]x402.PaymentRequirements, len(accepts)),
	}, Settlement: sr}
	for i, o := range accepts {
		o.Network, _ = x402.NetworkCAIP2(o.Network)
		pr.Accepts[i] = o
	}
	var wrapped paymentError
	wrapped.Error.Code, wrapped.Error.Message, wrapped.Error.Data = 402, reason, pr
	text, err := json.Marshal(wrapped)
	if err != nil { // the terms are plain data: this does not happen
		text = []byte(`{"` + MetaError + `":{"code":402,"message":"payment required"}}`)
	}
	return &mcp.CallToolResult{IsError: true, Content: []mcp.Content{&mcp.TextContent{Text: string(text)}}}
}

// PaymentTerms reads the terms of a tool result that asks for payment,
// where the x402 MCP transport lets a server put them, in the order it
// tells clients to look: structuredContent as the terms, or as the
// x402/error wrapper, then content[0].text as either. It fails when res
// is not an error result or carries no version 2 terms.
func PaymentTerms(res *mcp.CallToolResult) (*PaymentRequired, error) {
	if res == nil || !res.IsError {
		return nil, fmt.Errorf("trustmcp: not a tool error, so no payment terms")
	}
	var candidates [][]byte
	if res.StructuredContent != nil {
		if b, err := json.Marshal(res.StructuredContent); err == nil {
			candidates = append(candidates, b)
		}
	}
	if len(res.Content) > 0 {
		if tc, ok := res.Content[0].(*mcp.TextContent); ok {
			candidates = append(candidates, []byte(tc.Text))
		}
	}
	for _, b := range candidates {
		var pr PaymentRequired
		if json.Unmarshal(b, &pr) == nil && pr.X402Version == x402.Version2 && len(pr.Accepts) > 0 {
			return &pr, nil
		}
		var wrapped paymentError
		if json.Unmarshal(b, &wrapped) == nil && wrapped.Error.Code == 402 && wrapped.Error.Data != nil &&
			wrapped.Error.Data.X402Version == x402.Version2 && len(wrapped.Error.Data.Accepts) > 0 {
			return wrapped.Error.Data, nil
		}
	}
	return nil, fmt.Errorf("trustmcp: the tool error carries no x402 version 2 terms")
}
