package chatworker_test

import (
	"context"
	"encoding/json"
	"fmt"
	"log"
	"net/http"
	"net/http/httptest"

	"github.com/vouchkit/vouch/router"
	"github.com/vouchkit/vouch/router/chatworker"
)

// A judge model validates a claimed summary. The endpoint here is a
// stand-in that answers like an OpenAI-compatible server.
func Example() {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprint(w, `{"id":"chatcmpl-1","object":"chat.completion","model":"judge-1",
			"choices":[{"index":0,"finish_reason":"stop","message":{"role":"assistant",
			"content":"{\"verdict\":\"VALID\",\"confidence\":0.9,\"reasons\":[\"faithful to the source\"]}"}}],
			"usage":{"prompt_tokens":120,"completion_tokens":15,"total_tokens":135}}`)
	}))
	defer srv.Close()

	w, err := chatworker.New(chatworker.Config{
		BaseURL: srv.URL + "/v1",
		Model:   "judge-1",
		APIKey:  "sk-example",
		Prices:  map[string]chatworker.Price{"judge-1": {PromptPer1K: 0.5, CompletionPer1K: 1.5}},
	})
	if err != nil {
		log.Fatal(err)
	}
	res, err := w.Work(context.Background(), &router.Job{
		Kind:    router.KindValidate,
		Version: 2,
		Claim: &router.Claim{
			Type:        "summary",
			Description: "Summarize: the meeting moved to Tuesday.",
			Output:      json.RawMessage(`"The meeting is now on Tuesday."`),
		},
		Rules: []string{"accuracy"},
	})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(res.Verdict, res.Confidence, res.Reasons)
	fmt.Printf("%s: %d prompt + %d completion tokens, cost %.4f\n",
		res.Model, res.Usage.PromptTokens, res.Usage.CompletionTokens, res.Usage.Cost)
	// Output:
	// VALID 0.9 [faithful to the source]
	// judge-1: 120 prompt + 15 completion tokens, cost 0.0825
}

// A panel of two local models behind one OpenAI-compatible server and a
// hosted one, each in its own pool. Keys come from the environment.
func ExampleParsePanel() {
	panel := []byte(`
sessions:
  - {id: 201, pool: llama, tiers: [fast, safe], worker: {base_url: "http://localhost:11434/v1", model: llama3.2, temperature: 0}}
  - {id: 202, pool: qwen,  tiers: [safe],       worker: {base_url: "http://localhost:11434/v1", model: qwen2.5, temperature: 0}}
  - {id: 203, pool: hosted, tiers: [safe],      worker: {base_url: "https://api.openai.com/v1", model: gpt-4o-mini, api_key_env: OPENAI_API_KEY}}
`)
	getenv := func(name string) string { // os.Getenv in a real program
		return map[string]string{"OPENAI_API_KEY": "sk-from-the-environment"}[name]
	}
	sessions, err := chatworker.ParsePanel("panel.yaml", panel, getenv)
	if err != nil {
		log.Fatal(err)
	}
	for _, s := range sessions {
		fmt.Println(s.ID, s.Pool, s.Tiers, s.Worker)
	}
	// Output:
	// 201 llama [fast safe] chatworker.Worker(llama3.2 at localhost:11434)
	// 202 qwen [safe] chatworker.Worker(qwen2.5 at localhost:11434)
	// 203 hosted [safe] chatworker.Worker(gpt-4o-mini at api.openai.com)
}
