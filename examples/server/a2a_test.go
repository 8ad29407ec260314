package main

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/a2aproject/a2a-go/a2a"
	"github.com/a2aproject/a2a-go/a2aclient"
	a2acard "github.com/a2aproject/a2a-go/a2aclient/agentcard"

	"github.com/vouchkit/vouch/problem"
	"github.com/vouchkit/vouch/receipt"
)

// a2aBearer sends an API key with every A2A call.
type a2aBearer struct {
	a2aclient.PassthroughInterceptor
	key string
}

func (b a2aBearer) Before(ctx context.Context, req *a2aclient.Request) (context.Context, error) {
	req.Meta["Authorization"] = []string{"Bearer " + b.key}
	return ctx, nil
}

// a2aAnswer sends text to the agent at card with key and returns the
// data part of the task's artifact.
func a2aAnswer(t *testing.T, hc *http.Client, card *a2a.AgentCard, key string, part a2a.Part) map[string]any {
	t.Helper()
	ctx := context.Background()
	c, err := a2aclient.NewFromCard(ctx, card, a2aclient.WithJSONRPCTransport(hc), a2aclient.WithInterceptors(a2aBearer{key: key}))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Destroy()
	res, err := c.SendMessage(ctx, &a2a.MessageSendParams{Message: a2a.NewMessage(a2a.MessageRoleUser, part)})
	if err != nil {
		t.Fatalf("message/send %+v: %v", part, err)
	}
	task, ok := res.(*a2a.Task)
	if !ok || task.Status.State != a2a.TaskStateCompleted || len(task.Artifacts) != 1 {
		t.Fatalf("message/send %+v: %#v, want a completed task with an artifact", part, res)
	}
	for _, p := range task.Artifacts[0].Parts {
		if d, ok := p.(a2a.DataPart); ok {
			return d.Data
		}
	}
	t.Fatalf("message/send %+v: no data part in %+v", part, task.Artifacts[0])
	return nil
}

// TestRun_a2a resolves the card of a running server with the A2A SDK and
// sends messages to its url: the demo workers judge the arithmetic, and a
// receipt issued over A2A belongs to the key's integration.
func TestRun_a2a(t *testing.T) {
	t.Parallel()
	base, _, _ := startServer(t, "-integration", "acme=acme-key")
	hc := &http.Client{Transport: &http.Transport{}}
	defer hc.CloseIdleConnections()
	card, err := a2acard.NewResolver(hc).Resolve(context.Background(), base)
	if err != nil {
		t.Fatal(err)
	}
	if card.URL != base+a2aPath || card.PreferredTransport != a2a.TransportProtocolJSONRPC {
		t.Fatalf("card url %q over %q, want %s over JSONRPC", card.URL, card.PreferredTransport, base+a2aPath)
	}
	for claim, want := range map[string]string{"17 * 3 = 51": "VALID", "17 * 3 = 50": "INVALID"} {
		got := a2aAnswer(t, hc, card, defaultAPIKey, a2a.TextPart{Text: `Validate the claimed result "` + claim + `" for the task "What is 17 * 3?"`})
		if got["status"] != want || got["evidence"].(map[string]any)["redundancy"] != 3.0 {
			t.Errorf("%s: status %v, evidence %v; want %s on 3 runs", claim, got["status"], got["evidence"], want)
		}
	}

	// Every example on the card, as written, is answered by its skill.
	for _, skill := range card.Skills {
		for _, ex := range skill.Examples {
			got := a2aAnswer(t, hc, card, defaultAPIKey, a2a.TextPart{Text: ex})
			if got["status"] == nil && got["verdict"] == nil {
				t.Errorf("%s example %q: answer %v has no status or verdict", skill.ID, ex, got)
			}
		}
	}

	// The older path serves the same endpoint.
	old := *card
	old.URL, old.AdditionalInterfaces = base+a2aAPIPath, nil
	got := a2aAnswer(t, hc, &old, defaultAPIKey, a2a.DataPart{Data: map[string]any{"claimed_result": "17 * 3 = 51", "receipt": "inline", "policy": "fast"}})
	r, err := receipt.Parse([]byte(got["receipt_json"].(string)))
	if err != nil {
		t.Fatalf("receipt_json: %v", err)
	}
	raw, err := trustClient(t, base, defaultAPIKey).FetchReceipt(context.Background(), r.ReceiptID)
	if err != nil || string(raw) != got["receipt_json"] {
		t.Errorf("the key's integration fetched %s: %s (%v), want the receipt issued over A2A", r.ReceiptID, raw, err)
	}
	_, err = trustClient(t, base, "acme-key").FetchReceipt(context.Background(), r.ReceiptID)
	wantNotFound(t, "acme", err)
}

func TestRun_a2aRefusesWithoutKey(t *testing.T) {
	t.Parallel()
	base, _, _ := startServer(t)
	body := `{"jsonrpc":"2.0","id":1,"method":"message/send","params":{"message":{"kind":"message","messageId":"m1","role":"user","parts":[{"kind":"text","text":"Is it true that 1 * 1 = 1?"}]}}}`
	resp, err := http.Post(base+a2aPath, "application/json", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	var p problem.Details
	err = json.NewDecoder(resp.Body).Decode(&p)
	resp.Body.Close()
	if resp.StatusCode != http.StatusUnauthorized || err != nil || p.Code != "unauthorized" {
		t.Errorf("message/send without a key: %s %+v (%v), want the 401 problem", resp.Status, p, err)
	}
	if id := resp.Header.Get("X-Request-Id"); id == "" || p.RequestID != id || p.Instance != a2aPath {
		t.Errorf("the 401: X-Request-Id %q, problem %+v; want the id in both, and the path as instance", id, p)
	}
}

// a2aV1 posts a JSON-RPC request of A2A 1.0 to url with key and returns
// its result or its error.
func a2aV1(t *testing.T, url, key, method, params string) (result json.RawMessage, rerr *struct{ Code int }) {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, url, strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"`+method+`","params":`+params+`}`))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+key)
	req.Header.Set("A2A-Version", "1.0")
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var out struct {
		Result json.RawMessage
		Error  *struct{ Code int }
	}
	if err := json.NewDecoder(resp.Body).Decode(&out); err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("%s: %s (%v), want 200 with a JSON-RPC answer", method, resp.Status, err)
	}
	return out.Result, out.Error
}

// TestRun_a2aV1 reads the card as an A2A 1.0 client does, at the public
// router's path too, and sends a claim in 1.0 to both endpoints: the
// verdict is the same, and the task is its integration's alone.
func TestRun_a2aV1(t *testing.T) {
	t.Parallel()
	base, _, _ := startServer(t, "-integration", "acme=acme-key")
	req, err := http.NewRequest(http.MethodGet, base+"/.well-known/agent.json", nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("A2A-Version", "1.0")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	var card struct {
		SupportedInterfaces []struct{ URL, ProtocolBinding, ProtocolVersion string }
	}
	err = json.NewDecoder(resp.Body).Decode(&card)
	resp.Body.Close()
	if err != nil || len(card.SupportedInterfaces) == 0 || card.SupportedInterfaces[0].URL != base+a2aPath ||
		card.SupportedInterfaces[0].ProtocolVersion != "1.0" || card.SupportedInterfaces[0].ProtocolBinding != "JSONRPC" {
		t.Fatalf("card %+v (%v), want JSONRPC 1.0 at %s first", card, err, base+a2aPath)
	}
	for _, path := range []string{a2aPath, a2aAPIPath} {
		res, rerr := a2aV1(t, base+path, defaultAPIKey, "SendMessage",
			`{"message":{"messageId":"m1","role":"ROLE_USER","parts":[{"data":{"claimed_result":"17 * 3 = 50","input":"What is 17 * 3?"}}]}}`)
		var out struct {
			Task struct {
				ID        string
				Status    struct{ State string }
				Artifacts []struct {
					Parts []struct{ Data map[string]any }
				}
			}
		}
		if rerr != nil || json.Unmarshal(res, &out) != nil || out.Task.Status.State != "TASK_STATE_COMPLETED" ||
			len(out.Task.Artifacts) != 1 || out.Task.Artifacts[0].Parts[0].Data["status"] != "INVALID" {
			t.Fatalf("SendMessage at %s: %s %+v, want a completed task answering INVALID", path, res, rerr)
		}
		if _, rerr := a2aV1(t, base+path, "acme-key", "GetTask", `{"id":"`+out.Task.ID+`"}`); rerr == nil || rerr.Code != -32001 {
			t.Errorf("another integration's GetTask at %s: %+v, want task not found (-32001)", path, rerr)
		}
	}
}
