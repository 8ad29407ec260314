package chatworker_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/vouchkit/vouch/router/chatworker"
)

// TestParsePanel_workerFieldPath: a mistake that only the worker's own
// checks find (a base_url with a fragment, a header name that is no
// header's, a header spelt twice, a line break in a header's value or in
// a key read from the environment) is named by the path of the file's
// field, as every other mistake is, and not by the worker's path with the
// name of a field of Config that the file does not have. A key or header
// value read from the environment is named by its variable, never shown.
func TestParsePanel_workerFieldPath(t *testing.T) {
	t.Parallel()
	const secret = "sk-live\nsecret"
	tests := []struct {
		name, text string
		getenv     map[string]string
		want       chatworker.PanelError
	}{
		{"base_url with a fragment", "{base_url: 'http://h/v1#frag', model: m}", nil,
			chatworker.PanelError{Field: "sessions[0].worker.base_url", Message: "session 9: must not have a fragment"}},
		{"header name", "{base_url: 'http://h/v1', model: m, headers: {'Bad Name': x}}", nil,
			chatworker.PanelError{Field: `sessions[0].worker.headers["Bad Name"]`, Message: `session 9: "Bad Name" is not a valid header name`}},
		{"header spelt twice", "{base_url: 'http://h/v1', model: m, headers: {X-Team: a, x-team: b}}", nil,
			chatworker.PanelError{Field: "sessions[0].worker.headers.x-team",
				Message: `session 9: "X-Team" and "x-team" name the same header, as header names match regardless of case: give it once`}},
		{"header value", `{base_url: 'http://h/v1', model: m, headers: {X-Team: "a\nb"}}`, nil,
			chatworker.PanelError{Field: "sessions[0].worker.headers.X-Team", Message: "session 9: holds a line break or NUL"}},
		{"header_env spelt twice", "{base_url: 'http://h/v1', model: m, header_env: {X-Key: A_KEY, x-key: B_KEY}}",
			map[string]string{"A_KEY": "a", "B_KEY": "b"},
			chatworker.PanelError{Field: "sessions[0].worker.header_env.x-key",
				Message: `session 9: "X-Key" and "x-key" name the same header, as header names match regardless of case: give it once`}},
		{"header_env value", "{base_url: 'http://h/v1', model: m, header_env: {X-Key: A_KEY}}",
			map[string]string{"A_KEY": secret},
			chatworker.PanelError{Field: "sessions[0].worker.header_env.X-Key", Message: "session 9: environment variable A_KEY holds a line break or NUL"}},
		{"api_key_env value", "{base_url: 'http://h/v1', model: m, api_key_env: NINE_KEY}",
			map[string]string{"NINE_KEY": secret},
			chatworker.PanelError{Field: "sessions[0].worker.api_key_env", Message: "session 9: environment variable NINE_KEY holds a line break or NUL"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			text := "sessions:\n  - {id: 9, worker: " + tt.text + "}\n"
			got, err := chatworker.ParsePanel("p.yaml", []byte(text), env(tt.getenv))
			var pe *chatworker.PanelError
			if got != nil || !errors.As(err, &pe) {
				t.Fatalf("ParsePanel = %v, %v; want a *PanelError", got, err)
			}
			want := tt.want
			want.File, want.Err = "p.yaml", chatworker.ErrInvalidPanel
			if diff := cmp.Diff(want, *pe, cmp.Comparer(func(a, b error) bool { return errors.Is(a, b) })); diff != "" {
				t.Errorf("the error's field and message (-want +got):\n%s", diff)
			}
			if strings.Contains(err.Error(), "secret") {
				t.Errorf("error %q shows the value of an environment variable", err)
			}
		})
	}
}
