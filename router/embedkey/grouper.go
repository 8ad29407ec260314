package embedkey

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"math"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/vouchkit/vouch/consensus"
	"github.com/vouchkit/vouch/internal/httpapi"
	"github.com/vouchkit/vouch/internal/openaihttp"
)

// Defaults used when the matching [Config] field is zero.
const (
	// DefaultThreshold is the cosine similarity at which two answers
	// that the lexical guard finds stating the same facts agree. On the
	// real all-MiniLM-L6-v2 no threshold alone separates paraphrases from
	// answers that change one fact (at 0.97, 10 of 49 changed facts
	// agree); with the guard, at 0.9, 0 of 49 agree and 9 of 50
	// paraphrases do (docs/LOCAL-MODELS.md).
	DefaultThreshold = 0.9
	// DefaultTimeout bounds one Group call, retries included.
	DefaultTimeout = 30 * time.Second
	// DefaultMaxRetries is how many times a failed request is repeated.
	DefaultMaxRetries = 3
	// DefaultRetryWaitMin is the first pause between tries.
	DefaultRetryWaitMin = 500 * time.Millisecond
	// DefaultRetryWaitMax is the longest pause between tries.
	DefaultRetryWaitMax = 10 * time.Second
)

// maxReply bounds the body of a reply read from the endpoint.
const maxReply = 32 << 20

// maxErrorBody bounds the body of an error answer read for its message.
const maxErrorBody = 64 << 10

// Config configures a [Grouper]. BaseURL and Model are required; every
// other field has a useful zero value.
type Config struct {
	// BaseURL is the endpoint's API root, an absolute http or https URL
	// such as "https://api.openai.com/v1" or "http://localhost:11434/v1".
	// Requests go to BaseURL + "/embeddings"; a query string is kept.
	BaseURL string
	// Model is the embedding model to ask, as the endpoint names it.
	Model string
	// APIKey, if set, is sent as "Authorization: Bearer <APIKey>". It
	// never appears in logs or errors. Empty sends no key.
	APIKey string
	// Headers are added to every request; like APIKey, their values are
	// never logged.
	Headers http.Header
	// Threshold is the cosine similarity, in (0, 1], at which two answers
	// agree; 0 means DefaultThreshold.
	Threshold float64
	// DisableGuard, if true, groups by similarity alone: answers that
	// differ in a number, a name, a negation, the order of their roles or
	// a word of an exclusive kind may then agree (see the package doc).
	// Measure the model on answers that change one fact first.
	DisableGuard bool
	// Timeout bounds one Group call, retries included; 0 means
	// DefaultTimeout. The caller's context may end it sooner.
	Timeout time.Duration
	// HTTPClient sends the requests; nil means a new pooled client. The
	// grouper uses a copy that refuses a redirect to another scheme or
	// host: the request carries the key and the headers.
	HTTPClient *http.Client
	// MaxRetries is how many times a request is repeated after a
	// connection failure, a 429 or a 5xx; 0 means DefaultMaxRetries and a
	// negative value means none.
	MaxRetries int
	// RetryWaitMin and RetryWaitMax bound the pause between tries: it
	// doubles from RetryWaitMin up to RetryWaitMax, or is the Retry-After
	// of a 429 or 503. A pause longer than RetryWaitMax, or one that would
	// end after the call's deadline, ends the retries at once: the call
	// fails with the last answer's [*StatusError], or the last connection
	// failure. Zero means DefaultRetryWaitMin and DefaultRetryWaitMax.
	RetryWaitMin, RetryWaitMax time.Duration
	// Logger receives a debug record per call. Nil is silent.
	Logger *slog.Logger
}

// Grouper groups free-text answers by the cosine similarity of their
// embeddings. Build it with [New]. It is safe for concurrent use.
type Grouper struct {
	endpoint  string
	host      string
	model     string
	apiKey    string
	headers   http.Header
	threshold float64
	guard     bool
	timeout   time.Duration
	http      *http.Client
	retries   int
	waitMin   time.Duration
	waitMax   time.Duration
	log       *slog.Logger
}

// String returns "embedkey.Config(<model> at <base URL>)", the base URL
// without the password of its user info and its query; it never shows
// the key or the headers' values.
func (c Config) String() string {
	return "embedkey.Config(" + c.Model + " at " + httpapi.ShownURL(c.BaseURL) + ")"
}

// GoString is String, so that %#v does not print the key either.
func (c Config) GoString() string { return c.String() }

// LogValue is c as String shows it, so that a log never records the key.
func (c Config) LogValue() slog.Value { return slog.StringValue(c.String()) }

// New returns a Grouper for cfg, or an error wrapping ErrInvalidConfig that
// names the bad field.
func New(cfg Config) (*Grouper, error) {
	bad := func(format string, args ...any) error {
		return fmt.Errorf("%w: "+format, append([]any{ErrInvalidConfig}, args...)...)
	}
	u, err := url.Parse(cfg.BaseURL)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || u.User != nil {
		return nil, bad("BaseURL must be an absolute http or https URL without user info")
	}
	if u.Fragment != "" {
		return nil, bad("BaseURL must not have a fragment")
	}
	if strings.TrimSpace(cfg.Model) == "" {
		return nil, bad("Model is required")
	}
	if !(cfg.Threshold >= 0 && cfg.Threshold <= 1) {
		return nil, bad("Threshold must be in (0, 1], or 0 for the default; got %v", cfg.Threshold)
	}
	if cfg.Timeout < 0 || cfg.RetryWaitMin < 0 || cfg.RetryWaitMax < 0 {
		return nil, bad("Timeout, RetryWaitMin and RetryWaitMax must not be negative")
	}
	if strings.ContainsAny(cfg.APIKey, "\r\n\x00") {
		return nil, bad("APIKey holds a line break or NUL")
	}
	for name, vals := range cfg.Headers {
		for _, v := range vals {
			if name == "" || strings.ContainsAny(name+v, "\r\n\x00") {
				return nil, bad("Headers[%q] holds a line break or NUL", name)
			}
		}
	}
	g := &Grouper{
		host: u.Host, model: cfg.Model, apiKey: cfg.APIKey, headers: cfg.Headers.Clone(),
		threshold: cfg.Threshold, guard: !cfg.DisableGuard, timeout: cfg.Timeout, http: cfg.HTTPClient,
		retries: cfg.MaxRetries, waitMin: cfg.RetryWaitMin, waitMax: cfg.RetryWaitMax, log: cfg.Logger,
	}
	u.Path = strings.TrimSuffix(u.Path, "/") + "/embeddings"
	u.RawPath = ""
	g.endpoint = u.String()
	if g.threshold == 0 {
		g.threshold = DefaultThreshold
	}
	if g.timeout == 0 {
		g.timeout = DefaultTimeout
	}
	if g.http == nil {
		g.http = &http.Client{}
		if t, ok := http.DefaultTransport.(*http.Transport); ok {
			g.http.Transport = t.Clone()
		}
	}
	g.http = httpapi.SameOrigin(g.http)
	switch {
	case g.retries == 0:
		g.retries = DefaultMaxRetries
	case g.retries < 0:
		g.retries = 0
	}
	if g.waitMin == 0 {
		g.waitMin = DefaultRetryWaitMin
	}
	if g.waitMax == 0 {
		g.waitMax = DefaultRetryWaitMax
	}
	if g.waitMax < g.waitMin {
		return nil, bad("RetryWaitMax (%s) is shorter than RetryWaitMin (%s)", g.waitMax, g.waitMin)
	}
	if g.log == nil {
		g.log = slog.New(slog.DiscardHandler)
	}
	return g, nil
}

// String returns "embedkey.Grouper(<model> at <host>)"; it never shows the
// key or the headers.
func (g *Grouper) String() string { return fmt.Sprintf("embedkey.Grouper(%s at %s)", g.model, g.host) }

// GoString is String, so that %#v does not print the key either.
func (g *Grouper) GoString() string { return g.String() }

// Threshold returns the cosine similarity at which two answers agree.
func (g *Grouper) Threshold() float64 { return g.threshold }

// Group embeds outputs, one JSON value per replica in replica order (nil
// for a replica that gave none), in one request, and groups them as the
// package doc describes. The grouping's Groups and Pairs index outputs.
func (g *Grouper) Group(ctx context.Context, outputs []json.RawMessage) (*consensus.Grouping, error) {
	answers := make([]any, len(outputs))
	var texts []string
	var said []facts          // each text's facts, for the guard
	index := map[string]int{} // text → its row in texts
	row := make([]int, len(outputs))
	for i, o := range outputs {
		if len(o) == 0 || string(o) == "null" {
			continue
		}
		answers[i] = o
		text, err := textOf(o)
		if err != nil {
			return nil, fmt.Errorf("embedkey: output %d: %w", i, err)
		}
		r, ok := index[text]
		if !ok {
			r = len(texts)
			index[text] = r
			texts = append(texts, text)
			said = append(said, factsOf(text))
		}
		row[i] = r
	}
	var vecs [][]float64
	if len(texts) > 1 {
		var err error
		if vecs, err = g.Embed(ctx, texts); err != nil {
			return nil, err
		}
	}
	grouping, err := consensus.GroupBySimilarity(answers, g.threshold, func(i, j int) float64 {
		if row[i] == row[j] {
			return 1
		}
		if g.guard && !sameFacts(said[row[i]], said[row[j]]) {
			return 0
		}
		return cosine(vecs[row[i]], vecs[row[j]])
	})
	if err != nil {
		return nil, fmt.Errorf("embedkey: grouping: %w", err)
	}
	grouping.Method = "cosine similarity of " + g.model + " embeddings, sequential complete linkage"
	if g.guard {
		grouping.Method += "; 0 for answers that differ in a number, a name, a negation, the order of shared words or a word of an exclusive kind"
	}
	return grouping, nil
}

// textOf is what is embedded for an output: a JSON string's text with its
// white space trimmed and folded (as consensus.DefaultKey folds it), else
// the output's canonical JSON.
func textOf(o json.RawMessage) (string, error) {
	var s string
	if json.Unmarshal(o, &s) == nil {
		return strings.Join(strings.Fields(s), " "), nil
	}
	return consensus.DefaultKey(o)
}

// cosine is the cosine similarity of a and b, which have the same length
// and a non-zero norm (decodeEmbeddings checked both). Each vector is
// first divided by its largest magnitude, which leaves the cosine as it
// is and keeps the sums of squares from overflowing or underflowing
// whatever the endpoint's scale.
func cosine(a, b []float64) float64 {
	sa, sb := maxAbs(a), maxAbs(b)
	var dot, na, nb float64
	for i := range a {
		x, y := a[i]/sa, b[i]/sb
		dot += x * y
		na += x * x
		nb += y * y
	}
	return max(-1, min(1, dot/(math.Sqrt(na)*math.Sqrt(nb))))
}

// maxAbs is the largest magnitude among v's elements.
func maxAbs(v []float64) float64 {
	var m float64
	for _, x := range v {
		m = max(m, math.Abs(x))
	}
	return m
}

// embeddingsRequest is the body of POST /embeddings.
type embeddingsRequest struct {
	Model          string   `json:"model"`
	Input          []string `json:"input"`
	EncodingFormat string   `json:"encoding_format"`
}

// Embed returns the embeddings of texts, one vector per text in order,
// from one request to the endpoint (with retries), bounded by Timeout.
func (g *Grouper) Embed(ctx context.Context, texts []string) ([][]float64, error) {
	ctx, cancel := context.WithTimeout(ctx, g.timeout)
	defer cancel()
	body, err := json.Marshal(embeddingsRequest{Model: g.model, Input: texts, EncodingFormat: "float"})
	if err != nil {
		return nil, fmt.Errorf("embedkey: encoding the request: %w", err)
	}
	start := time.Now()
	resp, attempts, err := openaihttp.Post(ctx, openaihttp.PostConfig{
		Client: g.http, URL: g.endpoint, Body: body, APIKey: g.apiKey, Headers: g.headers,
		WaitMin: g.waitMin, WaitMax: g.waitMax, Retries: g.retries,
		Package: "embedkey", Model: g.model, Host: g.host,
	})
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		data, _ := io.ReadAll(io.LimitReader(resp.Body, maxErrorBody))
		return nil, &StatusError{Model: g.model, Host: g.host, StatusCode: resp.StatusCode,
			Message: openaihttp.Scrub(openaihttp.ErrorMessage(data), openaihttp.MaxMessage, g.apiKey, g.headers), Attempts: attempts}
	}
	data, err := io.ReadAll(io.LimitReader(resp.Body, maxReply+1))
	if err != nil {
		return nil, fmt.Errorf("embedkey: %s at %s: reading the reply: %w", g.model, g.host, err)
	}
	if len(data) > maxReply {
		return nil, fmt.Errorf("%w: reply larger than %d bytes (%s at %s)", ErrMalformedReply, maxReply, g.model, g.host)
	}
	vecs, err := decodeEmbeddings(data, len(texts))
	if err != nil {
		return nil, fmt.Errorf("%w (%s at %s)", err, g.model, g.host)
	}
	g.log.DebugContext(ctx, "embedkey: embedded", "model", g.model, "host", g.host, "inputs", len(texts),
		"attempts", attempts, "latency_ms", time.Since(start).Milliseconds())
	return vecs, nil
}

// embeddingsReply is the members of an embeddings list that are read.
type embeddingsReply struct {
	Data []struct {
		Index     *int            `json:"index"`
		Embedding json.RawMessage `json:"embedding"`
	} `json:"data"`
}

// decodeEmbeddings reads an embeddings list of n vectors of floats, placed
// by their index: the errors wrap ErrMalformedReply or ErrBadVectors.
func decodeEmbeddings(data []byte, n int) ([][]float64, error) {
	var r embeddingsReply
	if err := json.Unmarshal(data, &r); err != nil {
		return nil, fmt.Errorf("%w: %v", ErrMalformedReply, err)
	}
	if r.Data == nil {
		return nil, fmt.Errorf("%w: no data member", ErrMalformedReply)
	}
	if len(r.Data) != n {
		return nil, fmt.Errorf("%w: %d embeddings for %d inputs", ErrBadVectors, len(r.Data), n)
	}
	out := make([][]float64, n)
	dim := 0
	for k, d := range r.Data {
		i := k
		if d.Index != nil {
			i = *d.Index
		}
		if i < 0 || i >= n || out[i] != nil {
			return nil, fmt.Errorf("%w: embedding %d has index %d: out of range or repeated", ErrBadVectors, k, i)
		}
		var v []float64
		if err := json.Unmarshal(d.Embedding, &v); err != nil {
			return nil, fmt.Errorf("%w: embedding %d is not a list of numbers (base64 is not read): %v", ErrMalformedReply, i, err)
		}
		if len(v) == 0 {
			return nil, fmt.Errorf("%w: embedding %d is empty", ErrBadVectors, i)
		}
		if dim == 0 {
			dim = len(v)
		}
		if len(v) != dim {
			return nil, fmt.Errorf("%w: embedding %d has %d dimensions, another has %d", ErrBadVectors, i, len(v), dim)
		}
		// JSON numbers decode as finite; only direction matters, so any
		// scale is read, and only a vector with no direction is refused.
		if maxAbs(v) == 0 {
			return nil, fmt.Errorf("%w: embedding %d is a zero vector", ErrBadVectors, i)
		}
		out[i] = v
	}
	return out, nil
}
