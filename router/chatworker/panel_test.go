package chatworker_test

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/vouchkit/vouch/router"
	"github.com/vouchkit/vouch/router/chatworker"
)

func env(vars map[string]string) func(string) string {
	return func(k string) string { return vars[k] }
}

const panelYAML = `
prices:
  judge-1: {prompt_per_1k: 0.5, completion_per_1k: 1.5}
sessions:
  - id: 201
    pool: alpha
    tiers: [fast, safe]
    worker:
      base_url: %[1]s
      model: judge-1
      api_key_env: JUDGE_KEY
      temperature: 0
      max_tokens: 512
      headers: {X-Team: risk}
      header_env: {X-Gateway-Key: GATEWAY_KEY}
  - id: 202
    pool: beta
    worker:
      base_url: http://localhost:11434/v1
      model: llama3.2
      prices:
        llama3.2: {prompt_per_1k: 0, completion_per_1k: 0}
`

const panelJSON = `{
  "prices": {"judge-1": {"prompt_per_1k": 0.5, "completion_per_1k": 1.5}},
  "sessions": [
    {"id": 201, "pool": "alpha", "tiers": ["fast", "safe"],
     "worker": {"base_url": %q, "model": "judge-1", "api_key_env": "JUDGE_KEY",
                "temperature": 0, "max_tokens": 512, "headers": {"X-Team": "risk"},
                "header_env": {"X-Gateway-Key": "GATEWAY_KEY"}}},
    {"id": "202", "pool": "beta",
     "worker": {"base_url": "http://localhost:11434/v1", "model": "llama3.2",
                "prices": {"llama3.2": {"prompt_per_1k": 0, "completion_per_1k": 0}}}}
  ]
}`

func TestLoadPanel(t *testing.T) {
	for _, tc := range []struct{ file, text string }{
		{"panel.yaml", panelYAML},
		{"panel.YML", panelYAML},
		{"panel.json", panelJSON},
	} {
		t.Run(tc.file, func(t *testing.T) {
			f := newFake(t, content(`{"verdict":"VALID","confidence":0.9,"reasons":[]}`))
			path := filepath.Join(t.TempDir(), tc.file)
			if err := os.WriteFile(path, fmt.Appendf(nil, tc.text, f.baseURL()), 0o600); err != nil {
				t.Fatal(err)
			}

			got, err := chatworker.LoadPanel(path, env(map[string]string{"JUDGE_KEY": fakeKey, "GATEWAY_KEY": "gw-secret"}))
			if err != nil {
				t.Fatalf("LoadPanel: %v", err)
			}

			want := []chatworker.PanelSession{
				{ID: 201, Pool: "alpha", Tiers: []router.Tier{router.TierFast, router.TierSafe}},
				{ID: 202, Pool: "beta"},
			}
			if diff := cmp.Diff(want, got, cmpopts.IgnoreFields(chatworker.PanelSession{}, "Worker")); diff != "" {
				t.Errorf("sessions (-want +got):\n%s", diff)
			}
			if len(got) != 2 {
				t.FailNow()
			}
			if m, h := got[1].Worker.Model(), got[1].Worker.Host(); m != "llama3.2" || h != "localhost:11434" {
				t.Errorf("second worker = %s at %s, want llama3.2 at localhost:11434", m, h)
			}

			// The first worker calls the fake with the key from the
			// environment, the headers, the settings and the shared prices.
			res, err := got[0].Worker.Work(t.Context(), validateJob())
			if err != nil {
				t.Fatalf("Work: %v", err)
			}
			if res.Usage == nil || res.Usage.Cost != usage.Cost {
				t.Errorf("Usage = %+v, want cost %v from the shared price table", res.Usage, usage.Cost)
			}
			r := f.reqs()[0]
			if r.Header.Get("X-Team") != "risk" || r.Header.Get("X-Gateway-Key") != "gw-secret" || r.MaxTokens != 512 || r.Temperature == nil || *r.Temperature != 0 {
				t.Errorf("request = %+v, want X-Team risk, X-Gateway-Key from the environment, max_tokens 512, temperature 0", r)
			}
		})
	}
}

func TestParsePanel_errors(t *testing.T) {
	const ok = "{base_url: 'http://localhost:8080/v1', model: m}"
	tests := []struct {
		name     string
		file     string
		text     string
		getenv   map[string]string
		want     error
		wantMsgs []string // each found in the error's text
	}{
		{"unknown extension", "panel.toml", "", nil, chatworker.ErrInvalidPanel, []string{"panel.toml", ".toml"}},
		{"YAML syntax", "p.yaml", "sessions: [", nil, chatworker.ErrInvalidPanel, []string{"p.yaml"}},
		{"JSON syntax", "p.json", `{"sessions": [}`, nil, chatworker.ErrInvalidPanel, []string{"p.json"}},
		{"JSON trailing data", "p.json", `{"sessions": []} {}`, nil, chatworker.ErrInvalidPanel, []string{"after the JSON"}},
		{"JSON trailing brace", "p.json", `{"sessions": []} }`, nil, chatworker.ErrInvalidPanel, []string{"after the JSON"}},
		{"JSON unknown field", "p.json", `{"sessions":[{"id":1,"wroker":{"base_url":"http://h/v1","model":"m"}}]}`,
			nil, chatworker.ErrInvalidPanel, []string{"sessions[0].wroker:"}},
		{"JSON unknown field of a worker", "p.json", `{"sessions":[{"id":1,"worker":{"base_url":"http://h/v1","model":"m","temprature":0}}]}`,
			nil, chatworker.ErrInvalidPanel, []string{"sessions[0].worker.temprature:"}},
		{"JSON wrong type", "p.json", `{"sessions":[{"id":"x","worker":{"base_url":"http://h/v1","model":"m"}}]}`,
			nil, chatworker.ErrInvalidPanel, []string{"sessions[0].id:"}},
		{"unknown field", "p.yaml", "sessions:\n  - id: 1\n    worker: {base_url: 'http://h/v1', model: m, temprature: 0.2}",
			nil, chatworker.ErrInvalidPanel, []string{"temprature"}},
		{"no sessions", "p.yaml", "sessions: []", nil, chatworker.ErrInvalidPanel, []string{"p.yaml: sessions:"}},
		{"several problems at once", "p.yaml",
			"sessions:\n  - {id: 0, worker: " + ok + "}\n  - {id: 2, worker: {base_url: '/v1', model: m}}\n  - {id: 3, worker: {base_url: 'http://h/v1', model: ''}}",
			nil, chatworker.ErrInvalidPanel,
			[]string{"sessions[0].id:", "sessions[1].worker.base_url:", "sessions[2].worker.model:"}},
		{"repeated id", "p.yaml", "sessions:\n  - {id: 7, worker: " + ok + "}\n  - {id: 7, worker: " + ok + "}",
			nil, chatworker.ErrInvalidPanel, []string{"sessions[1].id: 7 repeats sessions[0].id"}},
		{"tier", "p.yaml", "sessions:\n  - {id: 1, tiers: [adaptive], worker: " + ok + "}",
			nil, chatworker.ErrInvalidPanel, []string{"sessions[0].tiers[0]:"}},
		{"temperature", "p.yaml", "sessions:\n  - {id: 1, worker: {base_url: 'http://h/v1', model: m, temperature: 3}}",
			nil, chatworker.ErrInvalidPanel, []string{"sessions[0].worker.temperature:"}},
		{"price", "p.yaml", "sessions:\n  - {id: 1, worker: {base_url: 'http://h/v1', model: m, prices: {m: {prompt_per_1k: -1}}}}",
			nil, chatworker.ErrInvalidPanel, []string{"sessions[0].worker.prices.m.prompt_per_1k:"}},
		{"price of a model with a dot", "p.yaml", "sessions:\n  - {id: 1, worker: {base_url: 'http://h/v1', model: m, prices: {'gpt-4.1': {prompt_per_1k: -1}}}}",
			nil, chatworker.ErrInvalidPanel, []string{`sessions[0].worker.prices["gpt-4.1"].prompt_per_1k:`}},
		{"header name", "p.yaml", "sessions:\n  - {id: 1, worker: {base_url: 'http://h/v1', model: m, headers: {'Bad Name': x}}}",
			nil, chatworker.ErrInvalidPanel, []string{`sessions[0].worker.headers["Bad Name"]: session 1:`, "Bad Name"}},
		{"missing env", "p.yaml", "sessions:\n  - {id: 9, worker: {base_url: 'http://h/v1', model: m, api_key_env: NINE_KEY}}",
			map[string]string{"OTHER": "x"}, chatworker.ErrMissingEnv,
			[]string{"sessions[0].worker.api_key_env:", "session 9", "NINE_KEY"}},
		{"empty env", "p.json", `{"sessions":[{"id":9,"worker":{"base_url":"http://h/v1","model":"m","api_key_env":"NINE_KEY"}}]}`,
			map[string]string{"NINE_KEY": ""}, chatworker.ErrMissingEnv, []string{"session 9", "NINE_KEY"}},
		{"header env missing", "p.yaml", "sessions:\n  - {id: 9, worker: {base_url: 'http://h/v1', model: m, header_env: {X-Gateway-Key: GW_KEY}}}",
			nil, chatworker.ErrMissingEnv, []string{"sessions[0].worker.header_env.X-Gateway-Key:", "session 9", "GW_KEY"}},
		{"header env no variable name", "p.yaml", "sessions:\n  - {id: 9, worker: {base_url: 'http://h/v1', model: m, header_env: {X-Gateway-Key: 'sk-live s3cret'}}}",
			nil, chatworker.ErrInvalidPanel, []string{"sessions[0].worker.header_env.X-Gateway-Key:", "name of an environment variable"}},
		{"header spelt twice", "p.yaml", "sessions:\n  - {id: 9, worker: {base_url: 'http://h/v1', model: m, headers: {X-Team: a, x-team: b}}}",
			nil, chatworker.ErrInvalidPanel, []string{"sessions[0].worker.headers.x-team: session 9:", `"X-Team"`, `"x-team"`}},
		{"JSON header spelt twice", "p.json", `{"sessions":[{"id":9,"worker":{"base_url":"http://h/v1","model":"m","headers":{"X-Team":"a","x-team":"b"}}}]}`,
			nil, chatworker.ErrInvalidPanel, []string{"sessions[0].worker.headers.x-team: session 9:", `"X-Team"`, `"x-team"`}},
		{"header env spelt twice", "p.yaml", "sessions:\n  - {id: 9, worker: {base_url: 'http://h/v1', model: m, header_env: {X-Key: A_KEY, x-key: B_KEY}}}",
			map[string]string{"A_KEY": "a", "B_KEY": "b"}, chatworker.ErrInvalidPanel, []string{"sessions[0].worker.header_env.x-key: session 9:", `"X-Key"`, `"x-key"`}},
		{"header twice", "p.yaml", "sessions:\n  - {id: 9, worker: {base_url: 'http://h/v1', model: m, headers: {x-gateway-key: a}, header_env: {X-Gateway-Key: GW_KEY}}}",
			map[string]string{"GW_KEY": "k"}, chatworker.ErrInvalidPanel, []string{"sessions[0].worker.header_env.X-Gateway-Key:", "headers"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := chatworker.ParsePanel(tt.file, []byte(tt.text), env(tt.getenv))
			if !errors.Is(err, tt.want) || got != nil {
				t.Fatalf("ParsePanel = %v, %v; want nil, %v", got, err, tt.want)
			}
			for _, m := range tt.wantMsgs {
				if !strings.Contains(err.Error(), m) {
					t.Errorf("error %q lacks %q", err, m)
				}
			}
			if strings.HasPrefix(tt.name, "JSON") && strings.Contains(err.Error(), "Go ") {
				t.Errorf("error %q names a Go type, which the file's author never wrote", err)
			}
			var pe *chatworker.PanelError
			if len(tt.wantMsgs) > 0 && strings.Contains(tt.wantMsgs[0], "sessions[") && !errors.As(err, &pe) {
				t.Errorf("error %v holds no *PanelError", err)
			}
		})
	}
}

func TestLoadPanel_missingFile(t *testing.T) {
	_, err := chatworker.LoadPanel(filepath.Join(t.TempDir(), "absent.yaml"), env(nil))
	if !errors.Is(err, os.ErrNotExist) {
		t.Errorf("LoadPanel error = %v, want one wrapping os.ErrNotExist", err)
	}
}

func FuzzParsePanel(f *testing.F) {
	f.Add([]byte(fmt.Sprintf(panelYAML, "http://localhost:8080/v1")), false)
	f.Add([]byte(fmt.Sprintf(panelJSON, "http://localhost:8080/v1")), true)
	f.Add([]byte("sessions:\n  - {id: 1, worker: {base_url: 'http://h/v1', model: m}}"), false)
	f.Add([]byte(`{"sessions":[{"id":"3","tiers":["oracle"],"worker":{"base_url":"https://h","model":"m"}}]}`), true)
	getenv := env(map[string]string{"JUDGE_KEY": "k"})
	f.Fuzz(func(t *testing.T, data []byte, isJSON bool) {
		name := "p.yaml"
		if isJSON {
			name = "p.json"
		}
		sessions, err := chatworker.ParsePanel(name, data, getenv)
		if err != nil {
			if !errors.Is(err, chatworker.ErrInvalidPanel) && !errors.Is(err, chatworker.ErrMissingEnv) {
				t.Fatalf("ParsePanel error %v wraps neither sentinel", err)
			}
			return
		}
		seen := map[router.SessionID]bool{}
		for _, s := range sessions {
			if s.ID <= 0 || seen[s.ID] || s.Worker == nil || s.Worker.Model() == "" || s.Worker.Host() == "" {
				t.Fatalf("ParsePanel accepted a bad session %+v in %q", s, data)
			}
			seen[s.ID] = true
		}
		if len(sessions) == 0 {
			t.Fatalf("ParsePanel accepted a panel without sessions: %q", data)
		}
	})
}

// TestParsePanel_baseURLHidden: a base_url refused quotes it without the
// password and the query, either of which may hold a key.
func TestParsePanel_baseURLHidden(t *testing.T) {
	for _, tt := range []struct{ url, shown string }{
		{"/v1?api-key=s3cret", `"/v1"`},
		{"ftp://user:s3cret@h/v1?api-key=s3cret", `"ftp://user:xxxxx@h/v1"`},
		{"http://user:s3cret@[::1/v1?api-key=s3cret", `"(unparseable)"`},
	} {
		text := "sessions:\n  - {id: 1, worker: {base_url: '" + tt.url + "', model: m}}"
		_, err := chatworker.ParsePanel("p.yaml", []byte(text), env(nil))
		if !errors.Is(err, chatworker.ErrInvalidPanel) {
			t.Fatalf("ParsePanel(%s) = %v, want ErrInvalidPanel", tt.url, err)
		}
		if msg := err.Error(); strings.Contains(msg, "s3cret") || !strings.Contains(msg, "sessions[0].worker.base_url: must be an absolute URL, got "+tt.shown) {
			t.Errorf("ParsePanel(%s) = %q, want the URL shown as %s", tt.url, msg, tt.shown)
		}
	}
}

// TestParsePanel_keyInAPIKeyEnv: an api_key_env that holds the key itself,
// rather than the name of a variable, is refused without quoting it.
func TestParsePanel_keyInAPIKeyEnv(t *testing.T) {
	for _, key := range []string{"sk-live-s3cret", "s3cret key", "1s3cret"} {
		text := "sessions:\n  - {id: 1, worker: {base_url: 'http://h/v1', model: m, api_key_env: '" + key + "'}}"
		_, err := chatworker.ParsePanel("p.yaml", []byte(text), env(map[string]string{key: "x"}))
		if !errors.Is(err, chatworker.ErrInvalidPanel) {
			t.Fatalf("ParsePanel(api_key_env %q) = %v, want ErrInvalidPanel", key, err)
		}
		if msg := err.Error(); strings.Contains(msg, "s3cret") || !strings.Contains(msg, "sessions[0].worker.api_key_env:") {
			t.Errorf("ParsePanel(api_key_env %q) = %q, want the field named and the value not shown", key, msg)
		}
	}
}

// TestParsePanel_yamlStrictness: an empty file, a second YAML document and
// a number that is not whole where one is wanted are refused, not read as
// no panel, ignored or truncated.
func TestParsePanel_yamlStrictness(t *testing.T) {
	const w = "worker: {base_url: 'http://h/v1', model: m}"
	for _, tt := range []struct{ name, file, text, want string }{
		{"empty YAML", "p.yaml", "", "p.yaml: the file is empty"},
		{"comments only", "p.yaml", "# sessions to come\n", "p.yaml: the file is empty"},
		{"empty JSON", "p.json", " \n", "p.json: the file is empty"},
		{"second document", "p.yaml", "sessions:\n  - {id: 1, " + w + "}\n---\nsessions:\n  - {id: 2, " + w + "}\n",
			"p.yaml: a second YAML document"},
		{"fractional id", "p.yaml", "sessions:\n  - {id: 1.5, " + w + "}", "line 2: 1.5 is not a whole number"},
		{"fractional max_tokens", "p.yaml", "sessions:\n  - {id: 1, worker: {base_url: 'http://h/v1', model: m, max_tokens: 0.5}}",
			"line 2: 0.5 is not a whole number"},
		{"YAML unknown field of a session", "p.yaml", "sessions:\n  - id: 1\n    wroker: {base_url: 'http://h/v1', model: m}",
			"line 3: wroker is not a field of a session; its fields are id, pool, tiers, worker"},
		{"YAML unknown field of a worker", "p.yaml", "sessions:\n  - id: 1\n    worker: {base_url: 'http://h/v1', model: m, temprature: 0}",
			"line 3: temprature is not a field of a worker; its fields are base_url, model, api_key_env, temperature, max_tokens, headers, header_env, prices"},
		{"YAML unknown field of the file", "p.yaml", "session:\n  - {id: 1, " + w + "}",
			"line 1: session is not a field of the file; its fields are prices, sessions"},
		{"JSON member twice", "p.json", `{"sessions":[{"id":1,"id":2,"worker":{"base_url":"http://h/v1","model":"m"}}]}`,
			"sessions[0].id"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			got, err := chatworker.ParsePanel(tt.file, []byte(tt.text), env(nil))
			if !errors.Is(err, chatworker.ErrInvalidPanel) || got != nil {
				t.Fatalf("ParsePanel = %v, %v; want nil, ErrInvalidPanel", got, err)
			}
			if !strings.Contains(err.Error(), tt.want) {
				t.Errorf("error %q lacks %q", err, tt.want)
			}
		})
	}
}
