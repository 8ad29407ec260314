package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/vouchkit/vouch/router"
	"github.com/vouchkit/vouch/router/chatworker"
)

// chatServer is a small OpenAI-compatible chat-completions endpoint: each
// model answers the verdict given for it, and the requests are recorded.
type chatServer struct {
	verdicts map[string]string // model → verdict
	mu       sync.Mutex
	seen     []string // "model key" of each request
}

func (c *chatServer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	var req struct {
		Model    string            `json:"model"`
		Messages []json.RawMessage `json:"messages"`
	}
	if r.Method != http.MethodPost || r.URL.Path != "/v1/chat/completions" {
		http.Error(w, `{"error":{"message":"not found"}}`, http.StatusNotFound)
		return
	}
	if err := json.NewDecoder(r.Body).Decode(&req); err != nil || len(req.Messages) == 0 {
		http.Error(w, `{"error":{"message":"bad request"}}`, http.StatusBadRequest)
		return
	}
	verdict, ok := c.verdicts[req.Model]
	if !ok {
		http.Error(w, `{"error":{"message":"no such model"}}`, http.StatusNotFound)
		return
	}
	c.mu.Lock()
	c.seen = append(c.seen, req.Model+" "+r.Header.Get("Authorization"))
	c.mu.Unlock()
	content, _ := json.Marshal(map[string]any{"verdict": verdict, "confidence": 0.9, "reasons": []string{req.Model + " says " + verdict}})
	w.Header().Set("Content-Type", "application/json")
	fmt.Fprintf(w, `{"id":"chatcmpl-1","object":"chat.completion","model":%q,"choices":[{"index":0,"message":{"role":"assistant","content":%q},"finish_reason":"stop"}],"usage":{"prompt_tokens":100,"completion_tokens":20,"total_tokens":120}}`,
		req.Model, content)
}

func TestRun_workersPanel(t *testing.T) {
	chat := &chatServer{verdicts: map[string]string{"judge-a": "VALID", "judge-b": "VALID", "judge-c": "INVALID"}}
	srv := httptest.NewServer(chat)
	defer srv.Close()
	t.Setenv("VOUCH_TEST_PANEL_KEY", "sk-panel")
	panel := fmt.Sprintf(`{"sessions": [
  {"id": 11, "pool": "a", "worker": {"base_url": %[1]q, "model": "judge-a", "api_key_env": "VOUCH_TEST_PANEL_KEY"}},
  {"id": 12, "pool": "b", "worker": {"base_url": %[1]q, "model": "judge-b"}},
  {"id": 13, "pool": "c", "worker": {"base_url": %[1]q, "model": "judge-c"}}
]}`, srv.URL+"/v1")
	path := filepath.Join(t.TempDir(), "panel.json")
	if err := os.WriteFile(path, []byte(panel), 0o600); err != nil {
		t.Fatal(err)
	}

	b, _, _ := startServerBanner(t, "-workers", path)
	if !strings.Contains(b.text, "sessions from "+path+": 11 ") || strings.Contains(b.text, "sk-panel") {
		t.Errorf("banner does not list the panel's sessions, or shows a key:\n%s", b.text)
	}
	c, err := router.NewClient(b.base, router.WithAPIKey(defaultAPIKey))
	if err != nil {
		t.Fatal(err)
	}
	resp, err := c.ValidateV3(context.Background(), &router.ValidateV3Request{
		ValidateTask: router.ValidateTask{Claim: router.Claim{Type: "tool_output", Output: json.RawMessage(`"17 * 3 = 51"`)}},
		Consensus:    router.ConsensusRequest{Replicas: 3, DisagreementPolicy: router.DisagreeReturnAll},
	})
	if err != nil {
		t.Fatal(err)
	}
	var models []string
	for _, run := range resp.Evidence.Runs {
		models = append(models, run.Configuration.Model)
	}
	slices.Sort(models)
	if resp.Verdict != router.VerdictValid || resp.Consensus.Replicas != 3 || !slices.Equal(models, []string{"judge-a", "judge-b", "judge-c"}) {
		t.Errorf("ValidateV3 = %s over models %q, want VALID by the majority of judge-a, judge-b and judge-c", resp.Verdict, models)
	}
	chat.mu.Lock()
	seen := slices.Sorted(slices.Values(chat.seen))
	chat.mu.Unlock()
	if want := []string{"judge-a Bearer sk-panel", "judge-b ", "judge-c "}; !slices.Equal(seen, want) {
		t.Errorf("the endpoint saw %q, want %q (the key only where the panel names one)", seen, want)
	}
}

func TestPanelSessions_missingKey(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "panel.yaml")
	panel := "sessions:\n  - id: 1\n    worker: {base_url: http://127.0.0.1:1/v1, model: m, api_key_env: NOT_SET}\n"
	if err := os.WriteFile(path, []byte(panel), 0o600); err != nil {
		t.Fatal(err)
	}
	_, _, err := panelSessions(path, func(string) string { return "" })
	if !errors.Is(err, chatworker.ErrMissingEnv) || !strings.HasPrefix(err.Error(), "-workers: ") {
		t.Errorf("panel with an unset key variable: %v, want an -workers error wrapping chatworker.ErrMissingEnv", err)
	}
}

func TestPanelSessions_readmeExample(t *testing.T) {
	t.Parallel()
	ss, desc, err := panelSessions("panel-ollama.yaml", func(string) string { return "" })
	if err != nil {
		t.Fatal(err)
	}
	var pools []string
	for _, s := range ss {
		pools = append(pools, s.Pool)
	}
	if !slices.Equal(pools, []string{"llama", "qwen", "gemma"}) || !strings.Contains(desc, "llama3.2:3b at localhost:11434") {
		t.Errorf("panel-ollama.yaml gives pools %q, %q; want llama, qwen and gemma", pools, desc)
	}
	readme, err := os.ReadFile("README.md")
	if err != nil {
		t.Fatal(err)
	}
	file, err := os.ReadFile("panel-ollama.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(readme), "```yaml\n"+string(file)+"```\n") {
		t.Error("README.md does not show panel-ollama.yaml as it is")
	}
}
