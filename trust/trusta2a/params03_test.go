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
