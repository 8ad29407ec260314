package chatworker_test

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"testing"
)

// BenchmarkWorker_Work measures one validate job against a loopback fake,
// next to a baseline that posts a fixed request to the same fake and
// decodes the reply with encoding/json: the difference is what prompts,
// retries, answer parsing and evidence cost per call.
func BenchmarkWorker_Work(b *testing.B) {
	f := newFake(b, content(`{"verdict":"VALID","confidence":0.92,"reasons":["matches the text"]}`))
	b.Run("baseline=post+decode", func(b *testing.B) {
		body := []byte(`{"model":"judge-1","messages":[{"role":"user","content":"Judge this."}]}`)
		client := &http.Client{}
		b.ReportAllocs()
		for b.Loop() {
			req, _ := http.NewRequestWithContext(b.Context(), http.MethodPost, f.baseURL()+"/chat/completions", bytes.NewReader(body))
			req.Header.Set("Content-Type", "application/json")
			req.Header.Set("Authorization", "Bearer "+fakeKey)
			resp, err := client.Do(req)
			if err != nil {
				b.Fatal(err)
			}
			var v map[string]any
			if err := json.NewDecoder(resp.Body).Decode(&v); err != nil {
				b.Fatal(err)
			}
			io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
		}
	})
	b.Run("worker", func(b *testing.B) {
		w := newWorker(b, f, nil)
		job := validateJob()
		b.ReportAllocs()
		for b.Loop() {
			if _, err := w.Work(b.Context(), job); err != nil {
				b.Fatal(err)
			}
		}
	})
}
