package trusta2a

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"slices"
	"strings"
	"testing"

	"github.com/vouchkit/vouch/trust"
)

// checkCall fails unless c, err is a call the services accept or an
// *InputError.
func checkCall(t *testing.T, c *call, err error) {
	t.Helper()
	if err != nil {
		var ie *InputError
		if !errors.As(err, &ie) || ie.Argument == "" || ie.Message == "" {
			t.Fatalf("%v is not an *InputError naming an argument", err)
		}
		return
	}
	switch {
	case c.trust != nil && c.factcheck == nil:
		if err := c.trust.Validate(); err != nil {
			t.Fatalf("%s built an invalid trust request: %v", c.skill, err)
		}
	case c.factcheck != nil && c.trust == nil:
		if err := c.factcheck.Validate(); err != nil {
			t.Fatalf("%s built an invalid factcheck request: %v", c.skill, err)
		}
	default:
		t.Fatalf("call %+v is neither a trust call nor a factcheck", c)
	}
}

// FuzzFromText reads any text as a message's text part: it must never
// panic, and must build a request the services accept or refuse it with
// an *InputError.
func FuzzFromText(f *testing.F) {
	for _, s := range []string{
		`Validate the claimed result "17 * 3 = 51" for the task "What is 17 * 3?" with policy oracle and receipt inline`,
		`Is "17 * 3 = 50" a correct answer to "What is 17 * 3?"`,
		`The seller delivered “17 * 3 = 50”; the buyer says "wrong \"really\"". Who is right?`,
		`Is it true that 17 * 3 = 51?`,
		`Fact-check "17 * 3 = 50" with replicas 5 and mode realtime`,
		`{"claimed_result":"x","policy":"fast"}`,
		`Delegate the task "\ud800"`,
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, text string) {
		c, err := fromText(text)
		checkCall(t, c, err)
	})
}

// FuzzFromData reads any JSON object as a message's data part, as the
// SDK hands it over.
func FuzzFromData(f *testing.F) {
	for _, s := range []string{
		`{"claimed_result":{"answer":51},"input":{"q":"17 * 3"},"spec":"integer product","policy":"oracle","receipt":"inline"}`,
		`{"skill":"arbitrate","claimed_result":"x","dispute_context":{"buyer":"no"}}`,
		`{"claim":"17 * 3 = 51","mode":"realtime","replicas":"5"}`,
		`{"objective":"multiply","input":{"kind":"array","items":[1,2]}}`,
		`{"input":null,"claimed_result":1e300}`,
		`{"input":"how many?","answer":"number","tolerance":{"absolute":0.5,"relative":0.01}}`,
		`{"input":"x","answer":"number","tolerance":{"abs":1,"absolute":-1}}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, raw []byte) {
		var data map[string]any
		if json.Unmarshal(raw, &data) != nil {
			return
		}
		c, err := fromData(data)
		checkCall(t, c, err)
	})
}

// FuzzV1Message reads any JSON as the message of an A2A 1.0 SendMessage:
// it must never panic, and must yield a message the executor reads (a
// call, or an *InputError) or refuse it with a field violation naming a
// member under message.
func FuzzV1Message(f *testing.F) {
	for _, s := range []string{
		`{"messageId":"m1","role":"ROLE_USER","parts":[{"text":"Is it true that 17 * 3 = 51?"}]}`,
		`{"messageId":"m1","role":"ROLE_USER","parts":[{"data":{"claimed_result":"x","policy":"fast"},"mediaType":"application/json"}]}`,
		`{"messageId":"m1","role":"ROLE_USER","parts":[{"raw":"aGk=","filename":"a.txt"},{"url":"https://example.com"}]}`,
		`{"messageId":"m1","role":"ROLE_USER","parts":[{"text":"a","data":null}],"metadata":{"k":[1,{"a":null}]}}`,
		`{"messageId":"","role":"ROLE_AGENT","parts":[{"data":[1]}],"extra":1}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, raw []byte) {
		rm := json.RawMessage(raw)
		msg, err := v1MessageIn(&rm)
		if err != nil {
			var v *fieldViolation
			if !errors.As(err, &v) || !strings.HasPrefix(v.Field, "message") || v.Description == "" {
				t.Fatalf("%v is not a field violation under message", err)
			}
			return
		}
		c, err := fromMessage(msg, nil)
		checkCall(t, c, err)
	})
}

// FuzzV1Request answers any body as an A2A 1.0 JSON-RPC request: never a
// panic, always a result or an error of the specification's codes.
func FuzzV1Request(f *testing.F) {
	for _, s := range []string{
		`{"jsonrpc":"2.0","id":1,"method":"SendMessage","params":{"message":{"messageId":"m1","role":"ROLE_USER","parts":[{"text":"Validate the claimed result \"51\""}]}}}`,
		`{"jsonrpc":"2.0","id":"a","method":"SendMessage","params":{"message":{"messageId":"m1","role":"ROLE_USER","parts":[{"data":{"claim":"x"}}]},"configuration":{"historyLength":-1}}}`,
		`{"jsonrpc":"2.0","id":2,"method":"GetTask","params":{"id":"t","historyLength":3}}`,
		`{"jsonrpc":"2.0","id":3,"method":"ListTasks","params":{"pageSize":0,"pageToken":"x","status":"TASK_STATE_COMPLETED","statusTimestampAfter":"2026-01-01T00:00:00Z"}}`,
		`{"jsonrpc":"2.0","id":4,"method":"CancelTask","params":null}`,
		`{"jsonrpc":"1.0","method":""}`,
	} {
		f.Add([]byte(s))
	}
	s := &v1Server{exec: &executor{caller: verdict{}, log: slog.New(slog.DiscardHandler)}, tasks: newTaskStore(100, 10, 1<<20)}
	codes := []int{-32700, -32600, -32601, -32602, -32603, -32001, -32002, -32003, -32004, -32005}
	f.Fuzz(func(t *testing.T, body []byte) {
		var req rpcRequest
		if json.Unmarshal(body, &req) != nil {
			return
		}
		resp := s.serve(trust.WithCaller(context.Background(), "fuzz"), &req)
		if (resp.Result == nil) == (resp.Error == nil) {
			t.Fatalf("%+v: want a result or an error", resp)
		}
		if resp.Error != nil && !slices.Contains(codes, resp.Error.Code) {
			t.Fatalf("error %+v: not a code of the specification", resp.Error)
		}
		if _, err := json.Marshal(resp); err != nil {
			t.Fatalf("the answer is not JSON: %v", err)
		}
	})
}

// verdict is a trust service that answers every call VALID.
type verdict struct{}

func (verdict) Call(context.Context, *trust.Request) (*trust.Response, error) {
	return &trust.Response{Status: trust.StatusValid, Confidence: 0.9, TraceID: "t"}, nil
}

// FuzzHandler sends any body over HTTP to the endpoint, naming any A2A
// version in the A2A-Version header or query parameter: the handler
// never panics, and answers a JSON-RPC response, a result or an error
// whose code is in JSON-RPC's range of reserved codes (or, to a streaming
// method, an event stream).
func FuzzHandler(f *testing.F) {
	for _, s := range []struct {
		version string
		query   bool
		body    string
	}{
		{"1.0", false, `{"jsonrpc":"2.0","id":1,"method":"SendMessage","params":{"message":{"messageId":"m1","role":"ROLE_USER","parts":[{"text":"Is it true that 17 * 3 = 51?"}]}}}`},
		{"", false, `{"jsonrpc":"2.0","id":"a","method":"message/send","params":{"message":{"kind":"message","messageId":"m1","role":"user","parts":[{"kind":"data","data":{"claimed_result":"51"}}]}}}`},
		{"0.3.0", true, `{"jsonrpc":"2.0","id":2,"method":"tasks/get","params":{"id":"t"}}`},
		{"2.0", false, `{"jsonrpc":"2.0","id":3,"method":"GetTask","params":{"id":"t"}}`},
		{"1", true, `[]`},
		{"", false, `{"jsonrpc":"2.0","id":4,"method":"ListTasks","params":{}}`},
	} {
		f.Add(s.version, s.query, []byte(s.body))
	}
	h, err := NewHandler(Config{Caller: verdict{}, MaxBodyBytes: 4096})
	if err != nil {
		f.Fatal(err)
	}
	f.Cleanup(func() { h.Close() }) // the calls of returnImmediately bodies end
	f.Fuzz(func(t *testing.T, version string, query bool, body []byte) {
		r := httptest.NewRequest(http.MethodPost, "/a2a", bytes.NewReader(body))
		if query {
			r.URL.RawQuery = url.Values{versionHeader: {version}}.Encode()
		} else if !strings.ContainsAny(version, "\r\n\x00") {
			r.Header.Set(versionHeader, version)
		}
		r.Header.Set("Content-Type", "application/json")
		w := httptest.NewRecorder()
		h.ServeHTTP(w, r.WithContext(trust.WithCaller(r.Context(), "fuzz")))
		if strings.HasPrefix(w.Header().Get("Content-Type"), "text/event-stream") {
			if w.Code != http.StatusOK {
				t.Fatalf("an event stream with status %d", w.Code)
			}
			return
		}
		var resp struct {
			JSONRPC string          `json:"jsonrpc"`
			Result  json.RawMessage `json:"result"`
			Error   *struct {
				Code int `json:"code"`
			} `json:"error"`
		}
		if err := json.Unmarshal(w.Body.Bytes(), &resp); err != nil || resp.JSONRPC != "2.0" || (resp.Result == nil) == (resp.Error == nil) {
			t.Fatalf("%q (version %q): %d %q is not a JSON-RPC response (%v)", body, version, w.Code, w.Body, err)
		}
		if resp.Error != nil && (resp.Error.Code < -32768 || resp.Error.Code > -32000) {
			t.Fatalf("%q (version %q): error code %d", body, version, resp.Error.Code)
		}
	})
}
