package chatworker_test

import (
	"errors"
	"fmt"
	"net/http"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/vouchkit/vouch/router"
	"github.com/vouchkit/vouch/router/chatworker"
)

// contentParts answers with a completion whose message content is parts,
// a JSON array, as the newer chat-completions format allows.
func contentParts(parts string) fakeReply {
	return func(f *fakeEndpoint, w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprintf(w, `{"id":"chatcmpl-3","object":"chat.completion","created":1700000000,"model":%q,`+
			`"choices":[{"index":0,"message":{"role":"assistant","content":%s},"finish_reason":"stop"}],`+
			`"usage":{"prompt_tokens":100,"completion_tokens":20,"total_tokens":120}}`, f.model, parts)
	}
}

// TestWorker_Work_contentParts checks that a reply whose content is an
// array of parts is read as the text of its text parts, in order, other
// parts ignored; and that one with no text, or a part that is not one,
// is the error a reply without content or a malformed one is.
func TestWorker_Work_contentParts(t *testing.T) {
	tests := []struct {
		name    string
		job     *router.Job
		parts   string
		want    *router.Result
		wantErr error
	}{
		{
			name: "a verdict split over two text parts around an image", job: validateJob(),
			parts: `[{"type":"text","text":"{\"verdict\":\"VAL"},{"type":"image_url","image_url":{"url":"data:,"}},` +
				`{"type":"text","text":"ID\",\"confidence\":0.9,\"reasons\":[\"ok\"]}"}]`,
			want: &router.Result{Verdict: router.VerdictValid, Confidence: 0.9, Reasons: []string{"ok"}, Model: fakeModel, Usage: usage},
		},
		{
			name: "a delegation's text", job: delegateJob(),
			parts: `[{"type":"text","text":"Bon"},{"type":"text","text":"jour\n"}]`,
			want:  &router.Result{Output: "Bonjour", Model: fakeModel, Usage: usage},
		},
		{
			name: "other parts are not read", job: delegateJob(),
			parts: `[{"type":"refusal","refusal":"no"},{"type":"text","text":"Bonjour"},{"type":"audio","text":7}]`,
			want:  &router.Result{Output: "Bonjour", Model: fakeModel, Usage: usage},
		},
		{name: "no text part", job: delegateJob(), parts: `[{"type":"image_url","image_url":{"url":"data:,"}}]`, wantErr: chatworker.ErrEmptyContent},
		{name: "no part", job: delegateJob(), parts: `[]`, wantErr: chatworker.ErrEmptyContent},
		{name: "a text part without text", job: delegateJob(), parts: `[{"type":"text","text":7}]`, wantErr: chatworker.ErrMalformedReply},
		{name: "a text part with no text", job: delegateJob(), parts: `[{"type":"text"}]`, wantErr: chatworker.ErrMalformedReply},
		{name: "a part that is no object", job: delegateJob(), parts: `["Bonjour"]`, wantErr: chatworker.ErrMalformedReply},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newFake(t, contentParts(tt.parts))
			w := newWorker(t, f, func(c *chatworker.Config) { c.DisableLogprobs = true })
			got, err := w.Work(t.Context(), tt.job)
			if tt.wantErr != nil {
				if !errors.Is(err, tt.wantErr) {
					t.Errorf("Work = %+v, %v; want an error wrapping %v", got, err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatalf("Work: %v", err)
			}
			got.Steps = nil // the call's evidence, checked elsewhere
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("result (-want +got):\n%s", diff)
			}
		})
	}
}
