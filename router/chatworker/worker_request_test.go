package chatworker_test

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"text/template"

	"github.com/google/go-cmp/cmp"

	"github.com/vouchkit/vouch/router"
	"github.com/vouchkit/vouch/router/chatworker"
)

func TestWorker_Work_request(t *testing.T) {
	f := newFake(t, content(`{"verdict":"VALID","confidence":0.9,"reasons":[]}`))
	temp := 0.0
	w := newWorker(t, f, func(c *chatworker.Config) {
		c.Temperature = &temp
		c.MaxTokens = 256
		c.Headers = map[string][]string{"X-Team": {"risk"}, "Authorization": {"Basic overridden"}}
	})
	job := validateJob()
	job.Metadata = map[string]any{"dispute": "buyer says the summary is wrong"}
	if _, err := w.Work(t.Context(), job); err != nil {
		t.Fatalf("Work: %v", err)
	}
	r := f.reqs()[0]
	if r.Temperature == nil || *r.Temperature != 0 || r.MaxTokens != 256 {
		t.Errorf("temperature, max_tokens = %v, %d; want 0, 256", r.Temperature, r.MaxTokens)
	}
	if got := r.Header.Get("X-Team"); got != "risk" {
		t.Errorf("X-Team = %q, want risk", got)
	}
	if len(r.Messages) != 2 || r.Messages[0].Role != "system" {
		t.Fatalf("messages = %+v, want system then user", r.Messages)
	}
	user := r.Messages[1].Content
	for _, want := range []string{
		"Claim type: summary",
		"Task: Summarize: the sky is blue on a clear day.",
		"- accuracy\n- non-hallucination",
		"<claimed_result>\nThe sky is blue on clear days.\n</claimed_result>",
		`"audience": "children"`,
		`"dispute": "buyer says the summary is wrong"`,
	} {
		if !strings.Contains(user, want) {
			t.Errorf("user message lacks %q:\n%s", want, user)
		}
	}
	var schema struct {
		Properties struct {
			Verdict struct {
				Enum []string `json:"enum"`
			} `json:"verdict"`
		} `json:"properties"`
	}
	if err := json.Unmarshal(r.ResponseFormat.JSONSchema.Schema, &schema); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"VALID", "INVALID", "RETRY", "NEEDS_SPEC"}, schema.Properties.Verdict.Enum); diff != "" {
		t.Errorf("verdict enum (-want +got):\n%s", diff)
	}
}

func TestWorker_Work_customPrompt(t *testing.T) {
	f := newFake(t, content(`{"verdict":"TRUE","confidence":0.9,"reasons":[]}`))
	tmpl := template.Must(template.New("").Parse(`{{define "user"}}Is it true that {{.Job.Statement}}?{{end}}`))
	w := newWorker(t, f, func(c *chatworker.Config) { c.FactcheckPrompt = tmpl })
	if _, err := w.Work(t.Context(), factcheckJob()); err != nil {
		t.Fatalf("Work: %v", err)
	}
	got := f.reqs()[0].Messages
	if len(got) != 1 || got[0].Content != "Is it true that Water boils at 100 degrees Celsius at sea level.?" {
		t.Errorf("messages = %+v, want only the custom user message", got)
	}
}

func TestWorker_Work_unsupportedJob(t *testing.T) {
	f := newFake(t, content("unused"))
	w := newWorker(t, f, nil)
	for name, job := range map[string]*router.Job{
		"nil":                        nil,
		"unknown kind":               {Kind: "summarize"},
		"validate without claim":     {Kind: router.KindValidate},
		"factcheck without text":     {Kind: router.KindFactcheck, Statement: " "},
		"delegate without objective": {Kind: router.KindDelegate},
	} {
		if _, err := w.Work(t.Context(), job); !errors.Is(err, chatworker.ErrUnsupportedJob) {
			t.Errorf("%s: Work error = %v, want ErrUnsupportedJob", name, err)
		}
	}
	if n := len(f.reqs()); n != 0 {
		t.Errorf("server saw %d requests, want none", n)
	}
}
