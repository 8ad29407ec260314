package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// debugVars are the members of /debug/vars a test reads.
type debugVars struct {
	Goroutines int                         `json:"goroutines"`
	Memstats   *struct{ HeapAlloc uint64 } `json:"memstats"`
	Cmdline    []string                    `json:"cmdline"`
	Calls      map[string]int64            `json:"calls"`
	Responses  map[string]int64            `json:"responses"`
	Executions int64                       `json:"worker_executions"`
	BySession  map[string]int64            `json:"worker_executions_by_session"`
	ByCallID   map[string]int64            `json:"executions_by_call_id"`
	Forgotten  int64                       `json:"call_ids_forgotten"`
	Limit      int                         `json:"call_ids_limit"`
	Settled    int64                       `json:"x402_settlements"`
}

func readVars(t *testing.T, url string) debugVars {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var v debugVars
	if err := json.NewDecoder(resp.Body).Decode(&v); err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("GET %s = %d (%v)", url, resp.StatusCode, err)
	}
	return v
}

// post sends body to url with the demo key and an Idempotency-Key when
// idem is set, and returns the response with its body decoded into out.
func post(t *testing.T, url, idem, body string, out any) *http.Response {
	t.Helper()
	req, err := http.NewRequestWithContext(context.Background(), http.MethodPost, url, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Authorization", "Bearer "+defaultAPIKey)
	if idem != "" {
		req.Header.Set("Idempotency-Key", idem)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if out != nil {
		if err := json.NewDecoder(resp.Body).Decode(out); err != nil {
			t.Fatalf("POST %s: %d, %v", url, resp.StatusCode, err)
		}
	}
	return resp
}

func TestRun_debugVars(t *testing.T) {
	t.Parallel()
	b, _, _ := startServerBanner(t, "-debug-addr", "127.0.0.1:0")
	if !strings.HasPrefix(b.debug, "http://127.0.0.1:") || !strings.HasSuffix(b.debug, "/debug/vars") {
		t.Fatalf("banner names debug vars at %q", b.debug)
	}
	before := readVars(t, b.debug)
	if before.Goroutines <= 0 || before.Memstats == nil || before.Memstats.HeapAlloc == 0 || before.Cmdline != nil || before.Executions != 0 {
		t.Errorf("fresh vars = %+v, want goroutines, memstats, no executions, and no command line (it holds keys)", before)
	}
	if before.Limit != defaultCallIDs || before.Forgotten != 0 {
		t.Errorf("call_ids_limit %d, forgotten %d; want %d and 0", before.Limit, before.Forgotten, defaultCallIDs)
	}

	// A v3 validate with a call id, run twice with one Idempotency-Key: the
	// workers run once per replica, the repeat is replayed.
	const v3 = `{"claim":{"type":"tool_output","output":"2 + 2 = 4"},"metadata":{"call_id":"call-v3"},"consensus":{"replicas":3}}`
	var first, again struct{ Consensus struct{ Replicas int } }
	post(t, b.base+"/api/v3/validate", "k1", v3, &first)
	resp := post(t, b.base+"/api/v3/validate", "k1", v3, &again)
	if resp.Header.Get("Idempotent-Replayed") != "true" || again != first {
		t.Errorf("repeat = %+v replayed %q, want %+v replayed", again, resp.Header.Get("Idempotent-Replayed"), first)
	}
	// A trust call with a call id: its router calls carry the metadata.
	const tr = `{"mode":"validation","policy":"adaptive","metadata":{"call_id":"call-trust"},"task":{"claimed_result":"3 * 3 = 9"}}`
	var tresp struct{ Evidence struct{ Redundancy int } }
	post(t, b.base+"/api/v4/trust", "", tr, &tresp)
	if resp, err := http.Get(b.base + "/no/such/path"); err == nil {
		resp.Body.Close()
	}

	v := readVars(t, b.debug)
	wantIDs := map[string]int64{"call-v3": int64(first.Consensus.Replicas), "call-trust": int64(tresp.Evidence.Redundancy)}
	if diff := cmp.Diff(wantIDs, v.ByCallID); diff != "" || first.Consensus.Replicas != 3 || tresp.Evidence.Redundancy == 0 {
		t.Errorf("executions_by_call_id (-want +got):\n%s", diff)
	}
	var bySession int64
	for _, n := range v.BySession {
		bySession += n
	}
	if total := int64(3 + tresp.Evidence.Redundancy); v.Executions != total || bySession != total {
		t.Errorf("worker_executions = %d, by session %d, want %d", v.Executions, bySession, total)
	}
	wantCalls := map[string]int64{"POST /api/v3/validate": 2, "POST /api/v4/trust": 1, "other": 1}
	if diff := cmp.Diff(wantCalls, v.Calls); diff != "" {
		t.Errorf("calls (-want +got):\n%s", diff)
	}
	if v.Responses["200"] != 3 || v.Responses["404"] != 1 {
		t.Errorf("responses = %v, want 3 × 200 and 1 × 404", v.Responses)
	}
}

// TestCallCounts_limit: the counts by call id hold the latest limit ids;
// a new id beyond the bound forgets the one seen first, whatever the
// count of calls.
func TestCallCounts_limit(t *testing.T) {
	t.Parallel()
	c := callCounts{limit: 2}
	for _, id := range []string{"a", "b", "a", "c", "c", "b", "d"} {
		c.add(id)
	}
	if got, want := c.snapshot(), map[string]int64{"c": 2, "d": 1}; !cmp.Equal(got, want) || c.forgottenCount() != 2 {
		t.Errorf("counts %v, forgotten %d; want %v and 2 forgotten", got, c.forgottenCount(), want)
	}
	for i := range 10000 {
		c.add(fmt.Sprint("id-", i))
	}
	if n := len(c.snapshot()); n != 2 || len(c.order) != 2 {
		t.Errorf("after 10000 more ids: %d counted, %d in order; want 2", n, len(c.order))
	}
}

// TestRun_debugVarsAgentAndLogRoutes checks that the MCP endpoints, the
// agent card and the receipts log count under their own route names in
// /debug/vars, not as "other", and that a proof does not count as a
// receipt lookup.
func TestRun_debugVarsAgentAndLogRoutes(t *testing.T) {
	t.Parallel()
	b, _, _ := startServerBanner(t, "-debug-addr", "127.0.0.1:0")
	get := func(path string) {
		t.Helper()
		req, err := http.NewRequestWithContext(context.Background(), http.MethodGet, b.base+path, nil)
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set("Authorization", "Bearer "+defaultAPIKey)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
	}
	const list = `{"jsonrpc":"2.0","id":1,"method":"tools/list"}`
	for _, path := range []string{mcpPath, mcpMessagesPath} {
		req, err := http.NewRequestWithContext(context.Background(), http.MethodPost, b.base+path, strings.NewReader(list))
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		req.Header.Set("Authorization", "Bearer "+defaultAPIKey)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			t.Errorf("POST %s tools/list = %d, want 200", path, resp.StatusCode)
		}
	}
	get("/.well-known/agent.json")
	get("/api/v1/a2a/agent.json")
	get("/api/v4/log")
	get("/api/v4/log/consistency?first=0&second=0")
	get("/api/v4/receipt/rcpt_aaaaaaaaaaaaaaaaaaaaaaaaaa/proof")
	get("/api/v4/receipt/rcpt_aaaaaaaaaaaaaaaaaaaaaaaaaa")

	want := map[string]int64{
		"POST /mcp": 1, "POST /mcp/messages": 1,
		"GET /.well-known/agent.json": 1, "GET /api/v1/a2a/agent.json": 1,
		"GET /api/v4/log": 1, "GET /api/v4/log/consistency": 1,
		"GET /api/v4/receipt/{receipt_id}/proof": 1, "GET /api/v4/receipt/{receipt_id}": 1,
	}
	// A route is counted once its handler returns, which may be just after
	// the client has read a flushed answer: read until the counts settle.
	got := readVars(t, b.debug).Calls
	for deadline := time.Now().Add(5 * time.Second); !cmp.Equal(want, got) && time.Now().Before(deadline); {
		time.Sleep(10 * time.Millisecond)
		got = readVars(t, b.debug).Calls
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("calls (-want +got):\n%s", diff)
	}
}

// TestRun_debugVarsQuery: /debug/vars takes one parameter, gc=1; any
// other (gc=true, a misspelt GC=1, gc given twice, a malformed query) is
// a 400 naming it, rather than dropped in silence: a load program that
// asked for a collection and did not get one would read garbage as live
// memory.
func TestRun_debugVarsQuery(t *testing.T) {
	t.Parallel()
	b, _, _ := startServerBanner(t, "-debug-addr", "127.0.0.1:0")
	for _, tt := range []struct {
		query string
		want  int
		names string
	}{
		{"", http.StatusOK, ""},
		{"?gc=1", http.StatusOK, ""},
		{"?gc=true", http.StatusBadRequest, "gc"},
		{"?gc=", http.StatusBadRequest, "gc"},
		{"?gc=1&gc=1", http.StatusBadRequest, "gc"},
		{"?GC=1", http.StatusBadRequest, "GC"},
		{"?gc=1&verbose=1", http.StatusBadRequest, "verbose"},
		{"?gc=1;", http.StatusBadRequest, "query"},
	} {
		resp, err := http.Get(b.debug + tt.query)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != tt.want || !strings.Contains(string(body), tt.names) {
			t.Errorf("GET /debug/vars%s = %d %.200q, want %d naming %q", tt.query, resp.StatusCode, body, tt.want, tt.names)
		}
	}
}

// TestRun_debugCallIDsLong: the counts by call id bound the text of the
// ids they keep, not only their number: a caller that names long call
// ids makes the server forget the oldest ones, and one longer than all
// the room is not counted by id, so that the counts hold at most
// callIDBytes an id of -debug-call-ids however long the ids are.
func TestRun_debugCallIDsLong(t *testing.T) {
	t.Parallel()
	b, _, _ := startServerBanner(t, "-debug-addr", "127.0.0.1:0", "-debug-call-ids", "4")
	call := func(id string) int64 {
		t.Helper()
		body := fmt.Sprintf(`{"claim":{"type":"tool_output","output":"2 + 2 = 4"},"metadata":{"call_id":%q},"consensus":{"replicas":3}}`, id)
		var out struct{ Consensus struct{ Replicas int } }
		if resp := post(t, b.base+"/api/v3/validate", "", body, &out); resp.StatusCode != http.StatusOK {
			t.Fatalf("POST /api/v3/validate = %d", resp.StatusCode)
		}
		return int64(out.Consensus.Replicas)
	}
	long1, long2 := strings.Repeat("a", 3*callIDBytes), strings.Repeat("b", 3*callIDBytes)
	call(long1)
	n2 := call(long2) // the two do not fit in 4 × callIDBytes: long1 is forgotten
	n3 := call("short")
	call(strings.Repeat("c", 4*callIDBytes+1)) // longer than all the room: not counted
	v := readVars(t, b.debug)
	want := map[string]int64{long2: n2, "short": n3}
	if diff := cmp.Diff(want, v.ByCallID); diff != "" || v.Forgotten != 1 {
		t.Errorf("executions_by_call_id (-want +got):\n%s\ncall_ids_forgotten %d, want 1", diff, v.Forgotten)
	}
}
