package trusta2a

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"

	"github.com/vouchkit/vouch/internal/jsonbody"
)

// sameID serves req, a version 0.3 request whose body is body, with rpc
// (the SDK's handler), and writes its answer with the request's id
// exactly as it was sent. The SDK reads an id into a Go value, a number
// into a float64, and so would answer 9007199254740993 as
// 9007199254740992, an id the client never sent (JSON-RPC 2.0 requires
// the answer's id to be the request's), and a number no float64 holds
// (1e400) as a parse error: the SDK is given 0 for a number.
func sameID(w http.ResponseWriter, r *http.Request, rpc http.Handler, body []byte, req *rpcRequest) {
	id := req.ID
	if jsonbody.Kind(id) == "number" {
		sent := struct {
			JSONRPC string          `json:"jsonrpc"`
			ID      json.RawMessage `json:"id"`
			Method  string          `json:"method"`
			Params  json.RawMessage `json:"params,omitempty"`
		}{req.JSONRPC, json.RawMessage("0"), req.Method, req.Params}
		if b, err := json.Marshal(sent); err == nil {
			body = b
		}
	}
	r.Body = io.NopCloser(bytes.NewReader(body))
	bw := &bufferedWriter{ResponseWriter: w}
	rpc.ServeHTTP(bw, r)
	var resp struct {
		JSONRPC string          `json:"jsonrpc"`
		ID      json.RawMessage `json:"id"`
		Result  json.RawMessage `json:"result,omitempty"`
		Error   json.RawMessage `json:"error,omitempty"`
	}
	body = bw.buf.Bytes()
	if json.Unmarshal(body, &resp) == nil {
		resp.ID = id
		if len(id) == 0 {
			resp.ID = json.RawMessage("null")
		}
		if b, err := json.Marshal(resp); err == nil {
			body = append(b, '\n')
		}
	}
	if bw.status != 0 {
		w.WriteHeader(bw.status)
	}
	w.Write(body)
}

// bufferedWriter holds what a handler writes, its status and body, for
// sameID to write once it has put the request's id back.
type bufferedWriter struct {
	http.ResponseWriter
	status int
	buf    bytes.Buffer
}

func (w *bufferedWriter) WriteHeader(status int) {
	if w.status == 0 {
		w.status = status
	}
}

func (w *bufferedWriter) Write(p []byte) (int, error) { return w.buf.Write(p) }
