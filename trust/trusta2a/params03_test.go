package trusta2a_test

import (
	"strings"
	"testing"

	"github.com/vouchkit/vouch/trust/trusta2a"
)

// TestParams03_wrongType: version 0.3 params that do not fit their
// method (a member of the wrong type, params missing or not an object)
// are invalid params naming the member by its path under params, as
// version 1.0 names them, not a parse error naming Go types.
func TestParams03_wrongType(t *testing.T) {
	f := newFixture(t, trusta2a.Config{})
	send := func(message string) string {
		return `{"jsonrpc":"2.0","id":1,"method":"message/send","params":{"message":` + message + `}}`
	}
	for _, c := range []struct {
		body string
		want string
	}{
		{send(`5`), "params.message: expected an object, got number"},
		{send(`{"kind":"message","messageId":5,"role":"user","parts":[]}`), "params.message.messageId: expected a string, got number"},
		{send(`{"kind":"message","messageId":"m1","role":"user","parts":"x"}`), "params.message.parts: expected an array, got string"},
		{`{"jsonrpc":"2.0","id":1,"method":"message/send","params":{"message":{"kind":"message","messageId":"m1","role":"user","parts":[]},"configuration":{"historyLength":"2"}}}`,
			"params.configuration.historyLength: expected a number, got string"},
		{`{"jsonrpc":"2.0","id":1,"method":"message/send"}`, "params: is required"},
		{`{"jsonrpc":"2.0","id":1,"method":"message/send","params":5}`, "params: expected an object, got number"},
		{`{"jsonrpc":"2.0","id":1,"method":"tasks/get","params":{"id":5}}`, "params.id: expected a string, got number"},
		{`{"jsonrpc":"2.0","id":1,"method":"tasks/cancel","params":{"id":["t"]}}`, "params.id: expected a string, got array"},
	} {
		_, rpcErr := f.post1(t, "demo-key", "", c.body)
		if rpcErr == nil || rpcErr.Code != -32602 || !strings.Contains(rpcErr.Message, c.want) || strings.Contains(rpcErr.Message, "Go ") {
			t.Errorf("%s: error %+v, want -32602 naming %q", c.body, rpcErr, c.want)
		}
	}
}

// TestParams03_message: a version 0.3 message is read as strictly as a
// version 1.0 one: a member the message or its part does not have, a
// role other than a client's, a part of no known kind, and a data part
// that no float64 or object holds are invalid params naming the member,
// a part by its index.
func TestParams03_message(t *testing.T) {
	f := newFixture(t, trusta2a.Config{})
	send := func(message string) string {
		return `{"jsonrpc":"2.0","id":1,"method":"message/send","params":{"message":` + message + `}}`
	}
	withParts := func(parts string) string {
		return send(`{"kind":"message","messageId":"m1","role":"user","parts":` + parts + `}`)
	}
	const claim = `{"kind":"data","data":{"claim":"17 * 3 = 51"}}`
	for _, c := range []struct {
		body string
		want string
	}{
		{withParts(`[{"kind":"zzz"}]`), "params.message.parts[0].kind: "},
		{withParts(`[{"text":"Is it true that 17 * 3 = 51?"}]`), "params.message.parts[0].kind: "},
		{withParts(`[` + claim + `,{"kind":"zzz"}]`), "params.message.parts[1].kind: "},
		{send(`{"kind":"message","messageId":"m1","contxtId":"c1","role":"user","parts":[` + claim + `]}`), "params.message.contxtId: "},
		{send(`{"kind":"message","messageId":"m1","role":"zzz","parts":[` + claim + `]}`), "params.message.role: "},
		{send(`{"kind":"message","messageId":"m1","parts":[` + claim + `]}`), "params.message.role: "},
		{send(`{"kind":"note","messageId":"m1","role":"user","parts":[` + claim + `]}`), "params.message.kind: "},
		{withParts(`[{"kind":"data","data":{"claim":"x","tolerance":{"absolute":1e400}}}]`), "params.message.parts[0].data.tolerance.absolute: "},
		{withParts(`[{"kind":"data","data":[1,2]}]`), "params.message.parts[0].data: "},
		{withParts(`[{"kind":"data","data":"17 * 3 = 51"}]`), "params.message.parts[0].data: "},
		{withParts(`[{"kind":"data","data":{"claim":"x"},"colour":1}]`), "params.message.parts[0].colour: "},
		{withParts(`[{"kind":"text","text":"Is it true that 17 * 3 = 51?","data":{}}]`), "params.message.parts[0].data: "},
		{withParts(`[{"kind":"text","text":5}]`), "params.message.parts[0].text: expected a string, got number"},
		{withParts(`[{"kind":"file","file":{"uri":"https://example.com/claim.txt","mimetype":"text/plain","size":3}}]`), "params.message.parts[0].file.size: "},
		{withParts(`[{"kind":"file","file":{}}]`), "params.message.parts[0].file: "},
		{`{"jsonrpc":"2.0","id":1,"method":"message/send","params":{"message":{"kind":"message","messageId":"m1","role":"user","parts":[` + claim + `]},"configuration":{"blockng":true}}}`,
			"params.configuration.blockng: "},
		{`{"jsonrpc":"2.0","id":1,"method":"message/send","params":{"mesage":{}}}`, "params.mesage: "},
		{`{"jsonrpc":"2.0","id":1,"method":"tasks/get","params":{"id":"t1","historyLenght":1}}`, "params.historyLenght: "},
		{`{"jsonrpc":"2.0","id":1,"method":"tasks/cancel","params":{"id":"t1","reason":"x"}}`, "params.reason: "},
		{`{"jsonrpc":"2.0","id":1,"method":"tasks/get","params":{"id":"t1","historyLength":-1}}`, "params.historyLength: is -1"},
		{`{"jsonrpc":"2.0","id":1,"method":"message/send","params":{"message":{"kind":"message","messageId":"m1","role":"user","parts":[` + claim + `]},"configuration":{"historyLength":-1}}}`,
			"params.configuration.historyLength: is -1"},
	} {
		_, rpcErr := f.post1(t, "demo-key", "", c.body)
		if rpcErr == nil || rpcErr.Code != -32602 || !strings.Contains(rpcErr.Message, c.want) {
			t.Errorf("%s: error %+v, want -32602 naming %q", c.body, rpcErr, c.want)
		}
	}
}

// TestParams03_required: a member version 0.3 requires and the request
// lacks is invalid params naming it by its path under params, as
// version 1.0 names it, not an SDK message naming Go fields, nor "task
// not found" for a cancel without id, nor a message kept without its
// messageId.
func TestParams03_required(t *testing.T) {
	f := newFixture(t, trusta2a.Config{})
	const claim = `{"kind":"data","data":{"claim":"17 * 3 = 51"}}`
	for _, c := range []struct {
		body string
		want string
	}{
		{`{"jsonrpc":"2.0","id":1,"method":"message/send","params":{}}`, "params.message: is required"},
		{`{"jsonrpc":"2.0","id":1,"method":"message/send","params":{"message":null}}`, "params.message: is required"},
		{`{"jsonrpc":"2.0","id":1,"method":"message/send","params":{"message":{"kind":"message","role":"user","parts":[` + claim + `]}}}`, "params.message.messageId: is required"},
		{`{"jsonrpc":"2.0","id":1,"method":"message/send","params":{"message":{"kind":"message","messageId":"","role":"user","parts":[` + claim + `]}}}`, "params.message.messageId: is required"},
		{`{"jsonrpc":"2.0","id":1,"method":"tasks/get","params":{}}`, "params.id: is required"},
		{`{"jsonrpc":"2.0","id":1,"method":"tasks/cancel","params":{}}`, "params.id: is required"},
		{`{"jsonrpc":"2.0","id":1,"method":"tasks/cancel","params":{"id":""}}`, "params.id: is required"},
	} {
		_, rpcErr := f.post1(t, "demo-key", "", c.body)
		if rpcErr == nil || rpcErr.Code != -32602 || !strings.Contains(rpcErr.Message, c.want) {
			t.Errorf("%s: error %+v, want -32602 naming %q", c.body, rpcErr, c.want)
		}
	}
}
