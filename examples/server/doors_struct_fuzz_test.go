package main

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/vouchkit/vouch/internal/fuzzjson"
)

var (
	genToolPolicy  = []string{`"fast"`, `"safe"`, `"oracle"`, `"adaptive"`}
	genToolReceipt = []string{`"none"`, `"inline"`, `"detached"`}
	genToolInput   = []string{`"What is 17 * 3?"`, `{"q":"17 * 3"}`, `{"kind":"array","items":["17 * 3"]}`}
	genToolResult  = []string{`"17 * 3 = 51"`, `"17 * 3 = 50"`, `51`, `{"answer":51}`}
	// genTools are the MCP tools and A2A skills with their arguments
	// (docs/INTERFACE.md section 12).
	genTools = []struct {
		name  string
		vocab fuzzjson.Vocabulary
	}{
		{"validate_claim", fuzzjson.Vocabulary{"claimed_result": genToolResult, "input": genToolInput, "spec": []string{`"a product"`, `{"s":1}`}, "policy": genToolPolicy, "receipt": genToolReceipt}},
		{"delegate_task", fuzzjson.Vocabulary{"objective": []string{`"17 * 3"`, `"multiply"`}, "input": genToolInput, "policy": genToolPolicy, "receipt": genToolReceipt,
			"agreement": []string{`"exact"`, `"judged"`}, "answer": []string{`"number"`}, "tolerance": fuzzjson.Vocabulary{"absolute": []string{`0.5`, `0`}, "relative": []string{`0.1`, `1`}}}},
		{"arbitrate", fuzzjson.Vocabulary{"claimed_result": genToolResult, "dispute_context": []string{`"the buyer says 50"`, `{"buyer":"50"}`}, "input": genToolInput, "spec": []string{`"a product"`}, "policy": genToolPolicy, "receipt": genToolReceipt}},
		{"factcheck", fuzzjson.Vocabulary{"claim": []string{`"17 * 3 = 51"`, `"17 * 3 = 50"`}, "mode": []string{`"standard"`, `"realtime"`}, "replicas": []string{`3`, `5`}}},
		{"get_receipt", fuzzjson.Vocabulary{"receipt_id": []string{`"rcpt_aaaaaaaaaaaaaaaaaaaaaaaaaa"`}}},
		{"verify_receipt", fuzzjson.Vocabulary{"receipt": []string{`"{}"`, `{"receipt_id":"rcpt_aaaaaaaaaaaaaaaaaaaaaaaaaa"}`}}},
		{"report_outcome", fuzzjson.Vocabulary{"trace_id": []string{`"4bf92f3577b34da6a3ce929d0e0e4736"`}, "receipt_id": []string{`"rcpt_aaaaaaaaaaaaaaaaaaaaaaaaaa"`}, "right": []string{`true`}, "verdict": []string{`"VALID"`, `"INVALID"`}}},
	}
)

// FuzzServerDoorsStruct calls the demo server's MCP tools (over HTTP) and
// A2A skills (a data part, in version 1.0 or 0.3) with arguments built by
// fuzzjson.Generator from each tool's own members, so that every call is valid JSON
// and most reach the trust service: the answers are checked as
// FuzzServerDoors checks them (no internal error, no "unavailable" tool
// error, no task failed as internal).
func FuzzServerDoorsStruct(f *testing.F) {
	for i := range genTools {
		for door := range 3 {
			f.Add(uint8(i), uint8(door), []byte{})
			f.Add(uint8(i), uint8(door), []byte(strings.Repeat("\x01", 48)))
			f.Add(uint8(i), uint8(door), []byte(strings.Repeat("\x02\x01\x00", 30)))
		}
	}
	h := doorsServer(f)
	f.Fuzz(func(t *testing.T, tool, door uint8, data []byte) {
		tl := genTools[int(tool)%len(genTools)]
		g := fuzzjson.New(data)
		args := g.Object(tl.vocab)
		var path, body string
		switch door % 3 {
		case 0:
			path = mcpPath
			body = `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"` + tl.name + `","arguments":` + args + `}}`
		case 1:
			path = a2aPath
			data := strings.Replace(args, "{", `{"skill":"`+tl.name+`",`, 1)
			data = strings.Replace(data, `,}`, `}`, 1)
			body = `{"jsonrpc":"2.0","id":1,"method":"SendMessage","params":{"message":{"messageId":"m1","role":"ROLE_USER","parts":[{"data":` + data + `}]}}}`
		default:
			path = a2aPath
			body = `{"jsonrpc":"2.0","id":"a","method":"message/send","params":{"message":{"kind":"message","messageId":"m1","role":"user","parts":[{"kind":"data","data":` + args + `}]}}}`
		}
		r := httptest.NewRequest(http.MethodPost, path, strings.NewReader(body))
		r.Header.Set("Content-Type", "application/json")
		r.Header.Set("Accept", "application/json, text/event-stream")
		r.Header.Set("Authorization", "Bearer "+defaultAPIKey)
		w := httptest.NewRecorder()
		h.ServeHTTP(w, r)
		if testing.Verbose() {
			t.Logf("%s %s -> %d %.300s", path, body, w.Code, w.Body)
		}
		if w.Code != http.StatusOK {
			// Refused before JSON-RPC (a lone surrogate, say: docs/INTERFACE.md 3):
			// a problem with a code and, for a 400 invalid_request, its fields.
			var p doorsProblem
			if err := json.Unmarshal(w.Body.Bytes(), &p); err != nil || w.Code >= 500 || p.Code == "" || p.Status != w.Code ||
				(p.Code == "invalid_request" && (len(p.Errors) == 0 || p.Errors[0].Field == "")) {
				t.Fatalf("%s %s -> %d %s", path, body, w.Code, w.Body)
			}
			return
		}
		checkRPC(t, path, w.Body.Bytes(), []byte(body))
	})
}
