package chatworker_test

import (
	"encoding/json"
	"fmt"
	"math"
	"net/http"
	"net/http/httptest"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"
)

// fakeEndpoint is an OpenAI-compatible chat-completions server for tests.
// It checks every request as the wire defines it (method, path under the
// base URL, content type, bearer key, model, messages, response_format)
// and answers with the replies of its script in order, repeating the last.
type fakeEndpoint struct {
	t     testing.TB
	srv   *httptest.Server
	model string
	key   string
	// rejectSchema makes it answer 400 to any response_format, as servers
	// without structured output do.
	rejectSchema bool
	// rejectLogprobs makes it answer 400 to logprobs, as servers without
	// them do.
	rejectLogprobs bool

	mu       sync.Mutex
	script   []fakeReply
	requests []fakeRequest
	// cancelled is closed when a slow reply sees its request's context
	// end.
	cancelled     chan struct{}
	cancelledOnce sync.Once
	// stop is closed when the test ends, so that no reply outlives it.
	stop chan struct{}
}

// fakeReply answers one request.
type fakeReply func(f *fakeEndpoint, w http.ResponseWriter, r *http.Request)

// fakeRequest is a request as the fake decoded it. Unknown members are
// rejected, so the worker cannot send anything the wire does not define.
type fakeRequest struct {
	Model    string `json:"model"`
	Messages []struct {
		Role    string `json:"role"`
		Content string `json:"content"`
	} `json:"messages"`
	Temperature    *float64 `json:"temperature"`
	MaxTokens      int      `json:"max_tokens"`
	ResponseFormat *struct {
		Type       string `json:"type"`
		JSONSchema *struct {
			Name   string          `json:"name"`
			Schema json.RawMessage `json:"schema"`
			Strict bool            `json:"strict"`
		} `json:"json_schema"`
	} `json:"response_format"`
	Logprobs    bool        `json:"logprobs"`
	TopLogprobs *int        `json:"top_logprobs"`
	Header      http.Header `json:"-"`
}

const (
	fakeModel = "judge-1"
	fakeKey   = "sk-test-0123456789abcdef"
)

var schemaName = regexp.MustCompile(`^[a-zA-Z0-9_-]{1,64}$`)

func newFake(t testing.TB, script ...fakeReply) *fakeEndpoint {
	t.Helper()
	f := &fakeEndpoint{t: t, model: fakeModel, key: fakeKey, script: script,
		cancelled: make(chan struct{}), stop: make(chan struct{})}
	f.srv = httptest.NewServer(http.HandlerFunc(f.serve))
	t.Cleanup(f.srv.Close)
	t.Cleanup(func() { close(f.stop) }) // runs first
	return f
}

// baseURL is the API root the worker is given.
func (f *fakeEndpoint) baseURL() string { return f.srv.URL + "/v1" }

func (f *fakeEndpoint) reqs() []fakeRequest {
	f.mu.Lock()
	defer f.mu.Unlock()
	return slices.Clone(f.requests)
}

// schemas reports, for each request received, whether it asked for
// response_format.
func (f *fakeEndpoint) schemas() []bool {
	var asked []bool
	for _, r := range f.reqs() {
		asked = append(asked, r.ResponseFormat != nil)
	}
	return asked
}

func (f *fakeEndpoint) serve(w http.ResponseWriter, r *http.Request) {
	bad := func(format string, args ...any) {
		f.t.Errorf("fake endpoint: "+format, args...)
		writeError(w, http.StatusBadRequest, fmt.Sprintf(format, args...), "")
	}
	if r.Method != http.MethodPost || r.URL.Path != "/v1/chat/completions" {
		bad("got %s %s, want POST /v1/chat/completions", r.Method, r.URL.Path)
		return
	}
	if ct := r.Header.Get("Content-Type"); ct != "application/json" {
		bad("Content-Type = %q, want application/json", ct)
		return
	}
	if f.key != "" && r.Header.Get("Authorization") != "Bearer "+f.key {
		writeError(w, http.StatusUnauthorized, "Incorrect API key provided: "+r.Header.Get("Authorization"), "")
		return
	}
	var req fakeRequest
	dec := json.NewDecoder(r.Body)
	dec.DisallowUnknownFields()
	if err := dec.Decode(&req); err != nil {
		bad("decoding the request: %v", err)
		return
	}
	req.Header = r.Header.Clone()
	if req.Model != f.model {
		bad("model = %q, want %q", req.Model, f.model)
		return
	}
	if len(req.Messages) == 0 || req.Messages[len(req.Messages)-1].Role != "user" {
		bad("messages must end with a user message: %+v", req.Messages)
		return
	}
	for i, m := range req.Messages {
		if m.Role != "system" && m.Role != "user" || strings.TrimSpace(m.Content) == "" {
			bad("messages[%d] = %+v: want a system or user message with content", i, m)
			return
		}
	}
	if rf := req.ResponseFormat; rf != nil {
		if rf.Type != "json_schema" || rf.JSONSchema == nil || !schemaName.MatchString(rf.JSONSchema.Name) || !rf.JSONSchema.Strict {
			bad("response_format = %+v: want json_schema with a valid name, strict", rf)
			return
		}
		var s struct {
			Type                 string         `json:"type"`
			Properties           map[string]any `json:"properties"`
			Required             []string       `json:"required"`
			AdditionalProperties *bool          `json:"additionalProperties"`
		}
		if err := json.Unmarshal(rf.JSONSchema.Schema, &s); err != nil || s.Type != "object" ||
			s.AdditionalProperties == nil || *s.AdditionalProperties || len(s.Required) != len(s.Properties) {
			bad("schema %s: a strict schema must be an object, require every property and forbid others", rf.JSONSchema.Schema)
			return
		}
	}

	f.mu.Lock()
	n := len(f.requests)
	f.requests = append(f.requests, req)
	reply := f.script[min(n, len(f.script)-1)]
	f.mu.Unlock()

	if req.Logprobs && f.rejectLogprobs {
		writeError(w, http.StatusBadRequest, "logprobs is not supported by this server", "logprobs")
		return
	}
	if req.TopLogprobs != nil && (!req.Logprobs || *req.TopLogprobs < 0 || *req.TopLogprobs > 20) {
		bad("top_logprobs = %d: want 0 to 20, with logprobs", *req.TopLogprobs)
		return
	}
	if req.ResponseFormat != nil && f.rejectSchema {
		writeError(w, http.StatusBadRequest, "response_format json_schema is not supported by this server", "response_format")
		return
	}
	reply(f, w, r)
}

func writeError(w http.ResponseWriter, status int, msg, param string) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	body := map[string]any{"error": map[string]any{"message": msg, "type": "invalid_request_error", "param": param, "code": nil}}
	_ = json.NewEncoder(w).Encode(body)
}

// fakeTokenBytes and fakeTokenProb are the fake's tokens: content cut
// into pieces of fakeTokenBytes, each sampled with probability
// fakeTokenProb.
const (
	fakeTokenBytes = 3
	fakeTokenProb  = 0.9
)

// completion writes a chat completion with one choice and, when the
// request asked for logprobs, the logprobs of its content's tokens.
func completion(content, refusal *string, promptTokens, completionTokens int) fakeReply {
	return func(f *fakeEndpoint, w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		var logprobs any
		if reqs := f.reqs(); content != nil && reqs[len(reqs)-1].Logprobs {
			var tokens []any
			for s := *content; s != ""; s = s[min(fakeTokenBytes, len(s)):] {
				tok := s[:min(fakeTokenBytes, len(s))]
				tokens = append(tokens, map[string]any{"token": tok, "logprob": math.Log(fakeTokenProb),
					"bytes": byteValues(tok), "top_logprobs": []any{}})
			}
			logprobs = map[string]any{"content": tokens}
		}
		body := map[string]any{
			"id": "chatcmpl-1", "object": "chat.completion", "created": 1700000000, "model": f.model,
			"choices": []any{map[string]any{
				"index":         0,
				"message":       map[string]any{"role": "assistant", "content": content, "refusal": refusal},
				"logprobs":      logprobs,
				"finish_reason": "stop",
			}},
			"usage": map[string]any{"prompt_tokens": promptTokens, "completion_tokens": completionTokens, "total_tokens": promptTokens + completionTokens},
		}
		_ = json.NewEncoder(w).Encode(body)
	}
}

func content(s string) fakeReply { return completion(&s, nil, 100, 20) }

func refusal(s string) fakeReply { return completion(nil, &s, 100, 5) }

func noChoices() fakeReply {
	return func(f *fakeEndpoint, w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprintf(w, `{"id":"chatcmpl-2","object":"chat.completion","created":1700000000,"model":%q,"choices":[],"usage":{"prompt_tokens":100,"completion_tokens":0,"total_tokens":100}}`, f.model)
	}
}

func rawBody(status int, body string) fakeReply {
	return func(_ *fakeEndpoint, w http.ResponseWriter, _ *http.Request) {
		w.WriteHeader(status)
		fmt.Fprint(w, body)
	}
}

func status(code int, retryAfter string) fakeReply {
	return func(_ *fakeEndpoint, w http.ResponseWriter, _ *http.Request) {
		if retryAfter != "" {
			w.Header().Set("Retry-After", retryAfter)
		}
		writeError(w, code, http.StatusText(code), "")
	}
}

// drop hijacks the connection and closes it without an answer.
func drop() fakeReply {
	return func(f *fakeEndpoint, w http.ResponseWriter, _ *http.Request) {
		conn, _, err := w.(http.Hijacker).Hijack()
		if err != nil {
			f.t.Errorf("fake endpoint: hijack: %v", err)
			return
		}
		conn.Close()
	}
}

// slow never answers: it waits for the request's context to end and
// records that it did (or for the test to end).
func slow() fakeReply {
	return func(f *fakeEndpoint, _ http.ResponseWriter, r *http.Request) {
		select {
		case <-r.Context().Done():
			f.cancelledOnce.Do(func() { close(f.cancelled) })
		case <-f.stop:
		}
	}
}

// byteValues is s's bytes as numbers, as logprobs' bytes member holds them.
func byteValues(s string) []int {
	b := make([]int, len(s))
	for i := range len(s) {
		b[i] = int(s[i])
	}
	return b
}
