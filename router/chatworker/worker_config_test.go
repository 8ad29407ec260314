package chatworker_test

import (
	"bytes"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"testing"
	"text/template"
	"time"

	"github.com/vouchkit/vouch/internal/secrettest"
	"github.com/vouchkit/vouch/router/chatworker"
)

// fmtAll formats v every way fmt can.
func fmtAll(v any) string { return fmt.Sprintf("%v %+v %#v %s", v, v, v, v) }

func TestWorker_keyNeverLogged(t *testing.T) {
	f := newFake(t, status(500, ""), rawBody(401, `{"error":{"message":"bad key `+fakeKey+`"}}`))
	var buf bytes.Buffer
	w := newWorker(t, f, func(c *chatworker.Config) {
		c.Logger = slog.New(slog.NewTextHandler(&buf, &slog.HandlerOptions{Level: slog.LevelDebug}))
	})
	_, err := w.Work(t.Context(), validateJob())
	var se *chatworker.StatusError
	if !errors.As(err, &se) || se.StatusCode != 401 || !strings.Contains(se.Message, "bad key [REDACTED]") {
		t.Errorf("Work error = %v, want a 401 *StatusError with the key scrubbed", err)
	}
	if buf.Len() == 0 {
		t.Fatal("nothing logged at debug level; the test proves nothing")
	}
	for name, s := range map[string]string{
		"log": buf.String(), "error": err.Error(), "%v": fmtAll(w),
	} {
		if strings.Contains(s, fakeKey) {
			t.Errorf("%s shows the API key: %s", name, s)
		}
	}
}

func TestNew_invalid(t *testing.T) {
	bad := -0.5
	tests := map[string]chatworker.Config{
		"no base URL":       {Model: "m"},
		"relative base URL": {BaseURL: "/v1", Model: "m"},
		"ftp base URL":      {BaseURL: "ftp://host/v1", Model: "m"},
		"no model":          {BaseURL: "http://localhost:8080/v1"},
		"temperature":       {BaseURL: "http://localhost:8080/v1", Model: "m", Temperature: &bad},
		"max tokens":        {BaseURL: "http://localhost:8080/v1", Model: "m", MaxTokens: -1},
		"price":             {BaseURL: "http://localhost:8080/v1", Model: "m", Prices: map[string]chatworker.Price{"m": {PromptPer1K: -1}}},
		"header name":       {BaseURL: "http://localhost:8080/v1", Model: "m", Headers: map[string][]string{"Bad Name": {"x"}}},
		"header twice":      {BaseURL: "http://localhost:8080/v1", Model: "m", Headers: map[string][]string{"X-Team": {"a"}, "x-team": {"b"}}},
		"header value":      {BaseURL: "http://localhost:8080/v1", Model: "m", Headers: map[string][]string{"X-A": {"a\r\nX-B: b"}}},
		"waits":             {BaseURL: "http://localhost:8080/v1", Model: "m", RetryWaitMin: time.Second, RetryWaitMax: time.Millisecond},
		"prompt without user": {BaseURL: "http://localhost:8080/v1", Model: "m",
			DelegatePrompt: template.Must(template.New("").Parse(`{{define "system"}}x{{end}}`))},
	}
	for name, cfg := range tests {
		if w, err := chatworker.New(cfg); !errors.Is(err, chatworker.ErrInvalidConfig) {
			t.Errorf("%s: New = %v, %v; want ErrInvalidConfig", name, w, err)
		}
	}
}

func TestWorker_String(t *testing.T) {
	w, err := chatworker.New(chatworker.Config{BaseURL: "https://api.example.com/v1?api-version=1", Model: "m1", APIKey: fakeKey})
	if err != nil {
		t.Fatal(err)
	}
	if got, want := w.String(), "chatworker.Worker(m1 at api.example.com)"; got != want {
		t.Errorf("String() = %q, want %q", got, want)
	}
	if s := fmtAll(w); strings.Contains(s, fakeKey) {
		t.Errorf("formatting shows the key: %s", s)
	}
}

func TestWorker_keyNeverShownCut(t *testing.T) {
	// The key straddles the point at which a message is cut: no prefix of
	// it may remain.
	msg := strings.Repeat("x", 500) + " " + fakeKey
	f := newFake(t, rawBody(401, `{"error":{"message":"`+msg+`"}}`))
	w := newWorker(t, f, nil)
	_, err := w.Work(t.Context(), validateJob())
	var se *chatworker.StatusError
	if !errors.As(err, &se) || se.StatusCode != 401 {
		t.Fatalf("Work error = %v, want a 401 *StatusError", err)
	}
	if prefix := fakeKey[:8]; strings.Contains(se.Message, prefix) {
		t.Errorf("Message shows the start of the API key: ...%s", se.Message[len(se.Message)-20:])
	}
}

func TestWorker_keyNeverShownInReply(t *testing.T) {
	// An endpoint that echoes the request (a base URL pointing at the
	// wrong service) answers 200 with the key in a body that is no chat
	// completion.
	f := newFake(t, rawBody(200, `{"headers":{"Authorization":"Bearer `+fakeKey+`","X-Tenant":"tenant-secret"}}`))
	w := newWorker(t, f, func(c *chatworker.Config) {
		c.Headers = map[string][]string{"X-Tenant": {"tenant-secret"}}
	})
	_, err := w.Work(t.Context(), validateJob())
	var re *chatworker.ResponseError
	if !errors.As(err, &re) {
		t.Fatalf("Work error = %v, want a *ResponseError", err)
	}
	for _, secret := range []string{fakeKey, "tenant-secret"} {
		if strings.Contains(err.Error(), secret) || strings.Contains(re.Raw, secret) {
			t.Errorf("the error shows %q: %v", secret, err)
		}
	}
}

func TestConfig_formatHidesKey(t *testing.T) {
	cfg := chatworker.Config{
		BaseURL: "https://user:hunter2@api.example.com/v1?key=sekrit", Model: "m1", APIKey: fakeKey,
		Headers: map[string][]string{"X-Tenant": {"tenant-secret"}},
	}
	for _, v := range []any{cfg, &cfg} {
		secrettest.Hidden(t, v, fakeKey, "tenant-secret", "hunter2", "sekrit")
	}
}

func TestNew_badURLHidesSecrets(t *testing.T) {
	_, err := chatworker.New(chatworker.Config{BaseURL: "ftp://user:hunter2@api.example.com/v1?key=sekrit", Model: "m"})
	if !errors.Is(err, chatworker.ErrInvalidConfig) {
		t.Fatalf("New = %v, want ErrInvalidConfig", err)
	}
	for _, secret := range []string{"hunter2", "sekrit"} {
		if strings.Contains(err.Error(), secret) {
			t.Errorf("the error shows %q: %v", secret, err)
		}
	}
}
