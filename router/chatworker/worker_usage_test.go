package chatworker_test

import (
	"encoding/json"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/vouchkit/vouch/router"
	"github.com/vouchkit/vouch/router/chatworker"
)

// TestWorker_Work_usageAsSent checks that a result's usage is what the
// endpoint reported: none when the reply has no usage, or a null one, as
// some servers send; zero tokens spent is not what they said.
func TestWorker_Work_usageAsSent(t *testing.T) {
	const answer = `{"verdict":"VALID","confidence":0.9,"reasons":[]}`
	tests := []struct {
		name  string
		usage string // the reply's usage member, or empty for none
		want  *router.Usage
	}{
		{name: "absent", want: nil},
		{name: "null", usage: `,"usage":null`, want: nil},
		{
			name:  "with members the worker does not read",
			usage: `,"usage":{"prompt_tokens":7,"completion_tokens":3,"total_tokens":10,"prompt_tokens_details":{"cached_tokens":2}}`,
			want:  &router.Usage{PromptTokens: 7, CompletionTokens: 3, Cost: 7*0.5/1000 + 3*1.5/1000},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			content, err := json.Marshal(answer)
			if err != nil {
				t.Fatal(err)
			}
			f := newFake(t, rawBody(200, `{"model":"`+fakeModel+`","choices":[{"index":0,"message":{"role":"assistant","content":`+
				string(content)+`},"finish_reason":"stop"}]`+tt.usage+`}`))
			w := newWorker(t, f, func(c *chatworker.Config) { c.DisableLogprobs = true })
			got, err := w.Work(t.Context(), validateJob())
			if err != nil {
				t.Fatalf("Work: %v", err)
			}
			if diff := cmp.Diff(tt.want, got.Usage); diff != "" {
				t.Errorf("Usage (-want +got):\n%s", diff)
			}
		})
	}
}
