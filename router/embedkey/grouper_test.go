package embedkey_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/vouchkit/vouch/internal/secrettest"
	"github.com/vouchkit/vouch/router/embedkey"
	"github.com/vouchkit/vouch/router/embedkey/embedkeytest"
)

const secret = "sk-test-secret-key"

// table embeds the texts it knows; any other text is a test error, shown
// as a vector far from every other.
func table(t *testing.T, m map[string][]float64) func(string) []float64 {
	return func(text string) []float64 {
		v, ok := m[text]
		if !ok {
			t.Errorf("the stand-in was asked to embed %q, which the test did not expect", text)
			return []float64{0, 0, 0, 1}
		}
		return v
	}
}

func outputs(texts ...string) []json.RawMessage {
	out := make([]json.RawMessage, len(texts))
	for i, s := range texts {
		if s != "" {
			out[i], _ = json.Marshal(s)
		}
	}
	return out
}

func newGrouper(t *testing.T, url string, cfg embedkey.Config) *embedkey.Grouper {
	t.Helper()
	cfg.BaseURL, cfg.Model = url+"/v1", "embed-1"
	if cfg.APIKey == "" {
		cfg.APIKey = secret
	}
	cfg.RetryWaitMin, cfg.RetryWaitMax = time.Millisecond, 2*time.Millisecond
	g, err := embedkey.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return g
}

func TestGrouper_Group(t *testing.T) {
	srv := embedkeytest.NewServer(table(t, map[string][]float64{
		"Marie Curie won it in 1903.":        {1, 0.1, 0},
		"Marie Curie won the prize in 1903.": {1, 0.12, 0},
		"Marie Curie won it in 1911.":        {0.6, 0.1, 0.8},
	}))
	defer srv.Close()
	g := newGrouper(t, srv.URL, embedkey.Config{Threshold: 0.95})
	got, err := g.Group(context.Background(), outputs(
		"Marie Curie won it in 1903.", "", "Marie Curie won the prize in 1903.",
		"Marie Curie won it in 1911.", "Marie Curie  won it in 1903.", // white space folds: the same answer
	))
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]int{0, -1, 0, 1, 0}, got.Groups); diff != "" {
		t.Errorf("groups (-want +got):\n%s", diff)
	}
	if got.Threshold != 0.95 || !strings.Contains(got.Method, "embed-1") {
		t.Errorf("threshold %v method %q, want 0.95 and the model named", got.Threshold, got.Method)
	}
	if n := srv.Requests.Load(); n != 1 {
		t.Errorf("%d requests, want 1", n)
	}
	if n := srv.Inputs.Load(); n != 3 {
		t.Errorf("%d texts embedded, want 3 (distinct answers once each)", n)
	}
	for _, p := range got.Pairs {
		same := got.Groups[p.A] == got.Groups[p.B]
		if same != (p.Value >= got.Threshold) {
			t.Errorf("pair %+v: same group %v, but similarity vs threshold %v says otherwise", p, same, got.Threshold)
		}
	}
	k0, _ := got.Key(json.RawMessage(`"Marie Curie won it in 1903."`))
	k2, _ := got.Key(json.RawMessage(`"Marie Curie won the prize in 1903."`))
	k3, _ := got.Key(json.RawMessage(`"Marie Curie won it in 1911."`))
	if k0 != k2 || k0 == k3 {
		t.Errorf("keys %q %q %q: want the paraphrases equal and the changed year apart", k0, k2, k3)
	}
}

// TestGrouper_Group_request checks what is sent: the path, the key, the
// model, the inputs and the float encoding.
func TestGrouper_Group_request(t *testing.T) {
	var got struct {
		path, auth, extra string
		body              map[string]any
	}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		got.path, got.auth, got.extra = r.URL.Path, r.Header.Get("Authorization"), r.Header.Get("X-Gateway")
		_ = json.NewDecoder(r.Body).Decode(&got.body)
		fmt.Fprint(w, `{"data":[{"index":1,"embedding":[0,1]},{"index":0,"embedding":[1,0]}]}`)
	}))
	defer srv.Close()
	g := newGrouper(t, srv.URL, embedkey.Config{Headers: http.Header{"X-Gateway": {"gw-value"}}})
	grp, err := g.Group(context.Background(), outputs("a", "b"))
	if err != nil {
		t.Fatal(err)
	}
	if got.path != "/v1/embeddings" || got.auth != "Bearer "+secret || got.extra != "gw-value" {
		t.Errorf("path %q auth %q header %q", got.path, got.auth, got.extra)
	}
	want := map[string]any{"model": "embed-1", "input": []any{"a", "b"}, "encoding_format": "float"}
	if diff := cmp.Diff(want, got.body); diff != "" {
		t.Errorf("body (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]int{0, 1}, grp.Groups); diff != "" { // placed by index: orthogonal
		t.Errorf("groups (-want +got):\n%s", diff)
	}
}

// TestGrouper_Group_noCall groups a single distinct answer without asking
// the endpoint.
func TestGrouper_Group_noCall(t *testing.T) {
	srv := embedkeytest.NewServer(func(string) []float64 { t.Error("embedded"); return []float64{1} })
	defer srv.Close()
	g := newGrouper(t, srv.URL, embedkey.Config{})
	got, err := g.Group(context.Background(), outputs("same", "", "same"))
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]int{0, -1, 0}, got.Groups); diff != "" {
		t.Errorf("groups (-want +got):\n%s", diff)
	}
}

func TestGrouper_Group_errors(t *testing.T) {
	for _, tc := range []struct {
		name   string
		status int
		body   string
		want   error
	}{
		{"malformed JSON", 200, `{"data":[`, embedkey.ErrMalformedReply},
		{"not a list", 200, `{"object":"list"}`, embedkey.ErrMalformedReply},
		{"base64 vectors", 200, `{"data":[{"index":0,"embedding":"AAAA"},{"index":1,"embedding":"AAAA"}]}`, embedkey.ErrMalformedReply},
		{"too few vectors", 200, `{"data":[{"index":0,"embedding":[1,0]}]}`, embedkey.ErrBadVectors},
		{"too many vectors", 200, `{"data":[{"embedding":[1]},{"embedding":[1]},{"embedding":[1]}]}`, embedkey.ErrBadVectors},
		{"dimensions differ", 200, `{"data":[{"index":0,"embedding":[1,0]},{"index":1,"embedding":[1,0,0]}]}`, embedkey.ErrBadVectors},
		{"index repeated", 200, `{"data":[{"index":0,"embedding":[1,0]},{"index":0,"embedding":[0,1]}]}`, embedkey.ErrBadVectors},
		{"index out of range", 200, `{"data":[{"index":0,"embedding":[1,0]},{"index":7,"embedding":[0,1]}]}`, embedkey.ErrBadVectors},
		{"zero vector", 200, `{"data":[{"index":0,"embedding":[0,0]},{"index":1,"embedding":[0,1]}]}`, embedkey.ErrBadVectors},
		{"number beyond float64", 200, `{"data":[{"index":0,"embedding":[1e400,0]},{"index":1,"embedding":[0,1]}]}`, embedkey.ErrMalformedReply},
		{"empty vector", 200, `{"data":[{"index":0,"embedding":[]},{"index":1,"embedding":[]}]}`, embedkey.ErrBadVectors},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				w.WriteHeader(tc.status)
				fmt.Fprint(w, tc.body)
			}))
			defer srv.Close()
			g := newGrouper(t, srv.URL, embedkey.Config{})
			_, err := g.Group(context.Background(), outputs("a", "b"))
			if !errors.Is(err, tc.want) {
				t.Fatalf("err = %v, want %v", err, tc.want)
			}
			if !strings.HasPrefix(err.Error(), "embedkey: ") {
				t.Errorf("error %q does not name the package", err)
			}
		})
	}
}

// TestGrouper_Group_anyScale checks that vectors are grouped by direction
// whatever their scale: squares that would overflow, or underflow to zero,
// neither refuse nor regroup them.
func TestGrouper_Group_anyScale(t *testing.T) {
	for _, scale := range []float64{1, 1e-170, 1e-300, 1e200, 1e300} {
		t.Run(fmt.Sprint(scale), func(t *testing.T) {
			srv := embedkeytest.NewServer(table(t, map[string][]float64{
				"a": {scale, 0.1 * scale, 0},
				"b": {scale, 0.12 * scale, 0},
				"c": {0.6 * scale, 0.1 * scale, 0.8 * scale},
			}))
			defer srv.Close()
			g := newGrouper(t, srv.URL, embedkey.Config{Threshold: 0.95})
			got, err := g.Group(context.Background(), outputs("a", "b", "c"))
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff([]int{0, 0, 1}, got.Groups); diff != "" {
				t.Errorf("groups (-want +got):\n%s", diff)
			}
		})
	}
}

// TestGrouper_Group_statusCut checks that no start of the key is left in
// a message cut where the key begins.
func TestGrouper_Group_statusCut(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(http.StatusUnauthorized)
		fmt.Fprintf(w, `{"error":{"message":"%s %s"}}`, strings.Repeat("x", 500), secret)
	}))
	defer srv.Close()
	g := newGrouper(t, srv.URL, embedkey.Config{})
	_, err := g.Group(context.Background(), outputs("a", "b"))
	var se *embedkey.StatusError
	if !errors.As(err, &se) {
		t.Fatalf("err = %v, want a StatusError", err)
	}
	if strings.Contains(se.Message, secret[:6]) {
		t.Errorf("Message shows the start of the key: ...%s", se.Message[len(se.Message)-20:])
	}
}

// TestGrouper_Group_status checks that a 4xx is not retried and that the
// endpoint's message reaches the error without the key.
func TestGrouper_Group_status(t *testing.T) {
	var calls atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		calls.Add(1)
		w.WriteHeader(http.StatusUnauthorized)
		fmt.Fprintf(w, `{"error":{"message":"invalid key %s"}}`, secret)
	}))
	defer srv.Close()
	g := newGrouper(t, srv.URL, embedkey.Config{})
	_, err := g.Group(context.Background(), outputs("a", "b"))
	var se *embedkey.StatusError
	if !errors.As(err, &se) || se.StatusCode != http.StatusUnauthorized || se.Attempts != 1 {
		t.Fatalf("err = %#v, want a 401 StatusError after 1 attempt", err)
	}
	if strings.Contains(err.Error(), secret) || !strings.Contains(se.Message, "[REDACTED]") {
		t.Errorf("error %q shows the key or lost the message", err)
	}
	if calls.Load() != 1 {
		t.Errorf("%d calls, want 1", calls.Load())
	}
}

// TestGrouper_Group_retry retries a 503 and succeeds.
func TestGrouper_Group_retry(t *testing.T) {
	var calls atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if calls.Add(1) == 1 {
			w.WriteHeader(http.StatusServiceUnavailable)
			return
		}
		fmt.Fprint(w, `{"data":[{"index":0,"embedding":[1,0]},{"index":1,"embedding":[1,0.01]}]}`)
	}))
	defer srv.Close()
	g := newGrouper(t, srv.URL, embedkey.Config{})
	got, err := g.Group(context.Background(), outputs("a", "b"))
	if err != nil {
		t.Fatal(err)
	}
	if calls.Load() != 2 || got.Groups[0] != got.Groups[1] {
		t.Errorf("calls %d groups %v, want 2 calls and one group", calls.Load(), got.Groups)
	}
}

// TestGrouper_Group_timeout ends a call the endpoint never answers.
func TestGrouper_Group_timeout(t *testing.T) {
	release := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-r.Context().Done():
		case <-release:
		}
	}))
	defer srv.Close()
	defer close(release)
	g := newGrouper(t, srv.URL, embedkey.Config{Timeout: 20 * time.Millisecond})
	_, err := g.Group(context.Background(), outputs("a", "b"))
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("err = %v, want the deadline", err)
	}
}

func TestNew_errors(t *testing.T) {
	for _, cfg := range []embedkey.Config{
		{Model: "m"},
		{BaseURL: "ftp://h/v1", Model: "m"},
		{BaseURL: "http://user:pw@h/v1", Model: "m"},
		{BaseURL: "http://h/v1"},
		{BaseURL: "http://h/v1", Model: "m", Threshold: 1.5},
		{BaseURL: "http://h/v1", Model: "m", Threshold: -0.5},
		{BaseURL: "http://h/v1", Model: "m", Timeout: -1},
		{BaseURL: "http://h/v1", Model: "m", APIKey: "a\nb"},
		{BaseURL: "http://h/v1", Model: "m", RetryWaitMin: time.Second, RetryWaitMax: time.Millisecond},
	} {
		if _, err := embedkey.New(cfg); !errors.Is(err, embedkey.ErrInvalidConfig) {
			t.Errorf("New(%+v): err = %v, want ErrInvalidConfig", cfg, err)
		}
	}
}

func TestGrouper_String(t *testing.T) {
	g, err := embedkey.New(embedkey.Config{BaseURL: "http://h:1/v1", Model: "m", APIKey: secret})
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range []string{g.String(), fmt.Sprintf("%v %+v %#v", g, g, g)} {
		if strings.Contains(s, secret) {
			t.Errorf("%q shows the key", s)
		}
	}
	if g.Threshold() != embedkey.DefaultThreshold {
		t.Errorf("Threshold() = %v, want the default", g.Threshold())
	}
}

// TestGrouper_Group_logs logs each call at debug level without the key or
// the headers' values.
func TestGrouper_Group_logs(t *testing.T) {
	srv := embedkeytest.NewServer(func(text string) []float64 { return []float64{1, float64(len(text))} })
	defer srv.Close()
	var buf bytes.Buffer
	g := newGrouper(t, srv.URL, embedkey.Config{
		Headers: http.Header{"X-Gateway": {"gw-secret-value"}},
		Logger:  slog.New(slog.NewTextHandler(&buf, &slog.HandlerOptions{Level: slog.LevelDebug})),
	})
	if _, err := g.Group(context.Background(), outputs("a", "bb")); err != nil {
		t.Fatal(err)
	}
	logs := buf.String()
	if !strings.Contains(logs, "embedkey: embedded") {
		t.Errorf("no debug record: %q", logs)
	}
	if strings.Contains(logs, secret) || strings.Contains(logs, "gw-secret-value") {
		t.Errorf("the logs show a secret: %q", logs)
	}
}

// TestGrouper_Group_guard: a model that puts a changed number as close as
// a paraphrase (all-MiniLM-L6-v2 puts 1,250 and 1,520 euros at 0.979)
// does not make them agree, unless the guard is off.
func TestGrouper_Group_guard(t *testing.T) {
	srv := embedkeytest.NewServer(func(string) []float64 { return []float64{1, 0} }) // every pair at 1
	defer srv.Close()
	answers := outputs("The invoice totals 1,250 euros.", "The invoice totals 1,520 euros.", "The invoice totals 1250 euros.")
	for _, tt := range []struct {
		disable bool
		want    []int
	}{{false, []int{0, 1, 0}}, {true, []int{0, 0, 0}}} {
		g := newGrouper(t, srv.URL, embedkey.Config{DisableGuard: tt.disable})
		got, err := g.Group(context.Background(), answers)
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(tt.want, got.Groups); diff != "" {
			t.Errorf("DisableGuard %v: groups (-want +got):\n%s", tt.disable, diff)
		}
		if guarded := strings.Contains(got.Method, "differ in a number"); guarded == tt.disable {
			t.Errorf("DisableGuard %v: method %q", tt.disable, got.Method)
		}
	}
}

func TestConfig_formatHidesKey(t *testing.T) {
	cfg := embedkey.Config{
		BaseURL: "https://user:hunter2@api.example.com/v1?key=sekrit", Model: "e1", APIKey: secret,
		Headers: map[string][]string{"X-Tenant": {"tenant-secret"}},
	}
	for _, v := range []any{cfg, &cfg} {
		secrettest.Hidden(t, v, secret, "tenant-secret", "hunter2", "sekrit")
	}
}

// TestGrouper_Group_retryAfterTooLong ends the retries at once when the
// endpoint asks for a pause longer than RetryWaitMax, in either form of
// Retry-After, and reports its status rather than waiting out Timeout.
func TestGrouper_Group_retryAfterTooLong(t *testing.T) {
	for _, retryAfter := range []string{"3600", time.Now().Add(time.Hour).UTC().Format(http.TimeFormat)} {
		t.Run(retryAfter, func(t *testing.T) {
			var calls atomic.Int64
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				calls.Add(1)
				w.Header().Set("Retry-After", retryAfter)
				w.WriteHeader(http.StatusTooManyRequests)
			}))
			defer srv.Close()
			g := newGrouper(t, srv.URL, embedkey.Config{Timeout: time.Second})
			_, err := g.Group(context.Background(), outputs("a", "b"))
			var se *embedkey.StatusError
			if !errors.As(err, &se) || se.StatusCode != http.StatusTooManyRequests || se.Attempts != 1 || calls.Load() != 1 {
				t.Fatalf("err = %v after %d calls, want a 429 StatusError after 1", err, calls.Load())
			}
		})
	}
}
