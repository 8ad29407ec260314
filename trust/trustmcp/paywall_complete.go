package trustmcp

import (
	"encoding/json"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// resultTypeVersion is the first MCP version whose tool results say
// whether they are complete (resultType).
const resultTypeVersion = "2026-07-28"

// complete returns res marked complete (resultType "complete") when call's
// session speaks MCP 2026-07-28 or later and res, a result the paywall
// wrote itself, does not say so: the SDK marks only the results of its
// tool handlers, and clients of that version (the official Python SDK)
// refuse a tool result without it. The SDK keeps the member unexported,
// so it is set as the SDK's JSON decoder sets it; res is returned as it is
// when it needs no mark or cannot be re-read.
func complete(call *mcp.CallToolRequest, res mcp.Result) mcp.Result {
	r, ok := res.(*mcp.CallToolResult)
	if !ok || r == nil || !marksResults(call) {
		return res
	}
	b, err := json.Marshal(r)
	if err != nil {
		return res
	}
	var members map[string]json.RawMessage
	if err := json.Unmarshal(b, &members); err != nil {
		return res
	}
	if _, ok := members["resultType"]; ok {
		return res
	}
	members["resultType"] = json.RawMessage(`"complete"`)
	if b, err = json.Marshal(members); err != nil {
		return res
	}
	var out mcp.CallToolResult
	if err := json.Unmarshal(b, &out); err != nil {
		return res
	}
	return &out
}

// marksResults reports whether the session of call speaks a version of
// MCP whose tool results carry resultType: one that did not initialize
// (server/discover: the latest version) or initialized with such a
// version, as the SDK itself decides.
func marksResults(call *mcp.CallToolRequest) bool {
	if call.Session == nil {
		return false
	}
	ip := call.Session.InitializeParams()
	return ip == nil || ip.ProtocolVersion >= resultTypeVersion
}
