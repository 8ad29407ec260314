package trusta2a_test

import (
	"bytes"
	"encoding/json"
	"net/http"
	"testing"

	"github.com/vouchkit/vouch/trust/trusta2a"
)

// TestEnvelope03: a version 0.3 request that is not JSON-RPC 2.0 (another
// jsonrpc, none, or no method) is an invalid request answered with its
// id, as JSON-RPC 2.0 requires of an id that could be read, and as
// version 1.0 answers it.
func TestEnvelope03(t *testing.T) {
	f := newFixture(t, trusta2a.Config{})
	for _, body := range []string{
		`{"jsonrpc":"1.0","id":7,"method":"tasks/get","params":{"id":"t1"}}`,
		`{"id":7,"method":"tasks/get","params":{"id":"t1"}}`,
		`{"jsonrpc":"2.0","id":7,"params":{"id":"t1"}}`,
	} {
		req, err := http.NewRequest(http.MethodPost, f.url+"/a2a", bytes.NewReader([]byte(body)))
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Authorization", "Bearer demo-key")
		resp, err := f.hc.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		var out struct {
			ID    json.RawMessage `json:"id"`
			Error *rpcError       `json:"error"`
		}
		err = json.NewDecoder(resp.Body).Decode(&out)
		resp.Body.Close()
		if err != nil || out.Error == nil || out.Error.Code != -32600 || string(out.ID) != "7" {
			t.Errorf("%s: id %s, error %+v (%v); want -32600 with id 7", body, out.ID, out.Error, err)
		}
	}
}
