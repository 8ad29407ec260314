package trusta2a_test

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/vouchkit/vouch/trust/trusta2a"
)

// A version 0.3 request whose metadata (of the params, the message or a
// part) holds a number no float64 holds, which the SDK cannot decode, is
// invalid params naming the number by its path under params, as a data
// part's is; never a parse error naming Go types.
func TestParams03_metadataNumberNoFloat64Holds(t *testing.T) {
	f := newFixture(t, trusta2a.Config{})
	const part = `{"kind":"data","data":{"claimed_result":"17 * 3 = 51","policy":"fast"}}`
	msg := func(meta, partMeta string) string {
		p := part
		if partMeta != "" {
			p = `{"kind":"data","data":{"claimed_result":"17 * 3 = 51","policy":"fast"},"metadata":` + partMeta + `}`
		}
		m := `{"kind":"message","messageId":"m1","role":"user","parts":[` + p + `]`
		if meta != "" {
			m += `,"metadata":` + meta
		}
		return m + `}`
	}
	for _, c := range []struct{ method, params, field string }{
		{"message/send", `{"message":` + msg(`{"x":1e400}`, "") + `}`, "params.message.metadata.x"},
		{"message/send", `{"message":` + msg("", `{"x":{"y":[1,-1e400]}}`) + `}`, "params.message.parts[0].metadata.x.y[1]"},
		{"message/send", `{"message":` + msg("", "") + `,"metadata":{"x":1e400}}`, "params.metadata.x"},
		{"message/send", `{"message":` + msg("", "") + `,"metadata":{"x":1e400},"configuration":{"blocking":false}}`, "params.metadata.x"},
		{"tasks/get", `{"id":"t1","metadata":{"x":1e400}}`, "params.metadata.x"},
		{"tasks/cancel", `{"id":"t1","metadata":{"x":1e400}}`, "params.metadata.x"},
	} {
		_, rerr := f.call1(t, "demo-key", "0.3", c.method, c.params)
		want := &rpcError{Code: -32602, Message: "Invalid params: " + c.field + ": number 1e400 is out of range: must be a finite number"}
		if c.field == "params.message.parts[0].metadata.x.y[1]" {
			want.Message = "Invalid params: " + c.field + ": number -1e400 is out of range: must be a finite number"
		}
		if diff := cmp.Diff(want, rerr); diff != "" {
			t.Errorf("%s %s (-want +got):\n%s", c.method, c.params, diff)
		}
	}
}
