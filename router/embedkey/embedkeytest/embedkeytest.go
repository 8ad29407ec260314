// Package embedkeytest provides a stand-in OpenAI-compatible embeddings
// endpoint for tests of code that groups answers with package embedkey.
package embedkeytest

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
)

// Server is a loopback embeddings endpoint, at URL + "/v1/embeddings",
// whose vectors come from a function the test supplies. Close it when
// done.
type Server struct {
	*httptest.Server
	// Requests counts the embeddings requests served.
	Requests atomic.Int64
	// Inputs counts the texts embedded, over every request.
	Inputs atomic.Int64
}

// NewServer starts a Server that answers POST /v1/embeddings by calling
// embed on each input text, in order, and returning the vectors as an
// OpenAI-compatible embeddings list. It answers 400 to a body it cannot
// read, 500 naming the cause when embed returns a vector JSON cannot
// carry (a NaN or an infinity), and 404 to any other path. embed must be
// safe for concurrent use.
// The caller must Close the server.
func NewServer(embed func(text string) []float64) *Server {
	s := &Server{}
	s.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodPost || r.URL.Path != "/v1/embeddings" {
			http.NotFound(w, r)
			return
		}
		var req struct {
			Model string   `json:"model"`
			Input []string `json:"input"`
		}
		if err := json.NewDecoder(r.Body).Decode(&req); err != nil {
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusBadRequest)
			_ = json.NewEncoder(w).Encode(map[string]any{"error": map[string]string{"message": err.Error()}})
			return
		}
		s.Requests.Add(1)
		s.Inputs.Add(int64(len(req.Input)))
		type item struct {
			Object    string    `json:"object"`
			Index     int       `json:"index"`
			Embedding []float64 `json:"embedding"`
		}
		data := make([]item, len(req.Input))
		for i, text := range req.Input {
			data[i] = item{Object: "embedding", Index: i, Embedding: embed(text)}
		}
		body, err := json.Marshal(map[string]any{"object": "list", "model": req.Model, "data": data})
		if err != nil { // a vector JSON cannot carry (NaN, ±Inf): the test's embed is at fault
			http.Error(w, "embedkeytest: embed returned a vector JSON cannot carry: "+err.Error(), http.StatusInternalServerError)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write(append(body, '\n'))
	}))
	return s
}
