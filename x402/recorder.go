package x402

import (
	"bytes"
	"net/http"
)

// recorder holds a handler's answer until the payment is settled.
type recorder struct {
	header http.Header
	status int
	body   bytes.Buffer
}

func (r *recorder) Header() http.Header { return r.header }

func (r *recorder) WriteHeader(code int) {
	if r.status == 0 && code >= 200 {
		r.status = code
	}
}

func (r *recorder) Write(b []byte) (int, error) {
	if r.status == 0 {
		r.status = http.StatusOK
	}
	return r.body.Write(b)
}

// copyTo sends the held answer to w.
func (r *recorder) copyTo(w http.ResponseWriter) {
	if r.status == 0 {
		r.status = http.StatusOK
	}
	writeBuffered(w, BufferedResponse{Status: r.status, Header: r.header, Body: r.body.Bytes()})
}
