package httpapi

import (
	"bytes"
	"encoding/json"
	"io"
	"mime"
	"net/http"

	"github.com/vouchkit/vouch/problem"
)

// ranAndFailed reports whether resp is a server's own answer that the
// work of the call ran and failed: a 502 problem with code
// all_replicas_failed, or a 504 problem with code timeout. Its replicas
// ran and spent what they spent, and a Server keeps no 5xx answer for
// replay, so a retry under the same Idempotency-Key would run them
// again. A proxy's 502 or 504, which is no such problem, reads false.
// It reads at most limit+1 bytes of the body and puts them back, so that
// the caller still reads the whole body.
func ranAndFailed(resp *http.Response, limit int64) bool {
	var want problem.Code
	switch resp.StatusCode {
	case http.StatusBadGateway:
		want = problem.CodeAllReplicasFailed
	case http.StatusGatewayTimeout:
		want = problem.CodeTimeout
	default:
		return false
	}
	mt, _, err := mime.ParseMediaType(resp.Header.Get("Content-Type"))
	if err != nil || mt != "application/problem+json" {
		return false
	}
	data, err := io.ReadAll(io.LimitReader(resp.Body, limit+1))
	resp.Body = readCloser{io.MultiReader(bytes.NewReader(data), resp.Body), resp.Body}
	if err != nil {
		return false
	}
	var p struct {
		Code problem.Code `json:"code"`
	}
	return json.Unmarshal(data, &p) == nil && p.Code == want
}

// readCloser reads from Reader and closes Closer.
type readCloser struct {
	io.Reader
	io.Closer
}
