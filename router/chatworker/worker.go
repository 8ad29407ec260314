package chatworker

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"maps"
	"math"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"text/template"
	"time"

	"github.com/vouchkit/vouch/internal/httpapi"
	"github.com/vouchkit/vouch/router"
)

// Defaults used when the matching [Config] field is zero.
const (
	// DefaultMaxRetries is how many times a failed request is repeated.
	DefaultMaxRetries = 3
	// DefaultRetryWaitMin is the first pause between tries.
	DefaultRetryWaitMin = 500 * time.Millisecond
	// DefaultRetryWaitMax is the longest pause between tries, and the
	// longest Retry-After the worker waits for.
	DefaultRetryWaitMax = 30 * time.Second
)

// Config configures a [Worker]. BaseURL and Model are required; every other
// field has a useful zero value.
type Config struct {
	// BaseURL is the endpoint's API root, an absolute http or https URL
	// such as "https://api.openai.com/v1" or "http://localhost:11434/v1".
	// Requests go to BaseURL + "/chat/completions"; a query string (such
	// as an api-version) is kept.
	BaseURL string
	// Model is the model to ask, as the endpoint names it.
	Model string
	// APIKey, if set, is sent as "Authorization: Bearer <APIKey>" and
	// takes precedence over an Authorization in Headers. It never appears
	// in logs, results or errors. Empty sends no key (local servers).
	APIKey string
	// Temperature is the sampling temperature, from 0 to 2; nil leaves it
	// to the endpoint.
	Temperature *float64
	// MaxTokens bounds the reply's tokens (sent as max_tokens); 0 leaves
	// it to the endpoint.
	MaxTokens int
	// Headers are added to every request (for example a gateway's own key
	// header). Like APIKey, their values are never logged. Two names that
	// differ only in case ("X-Team", "x-team") are refused: a request
	// carries one header of each name.
	Headers http.Header
	// Prices is the price table, by model name; nil means costs are not
	// known and Usage.Cost stays 0. The reply's model is looked up first,
	// then Model.
	Prices map[string]Price

	// ValidatePrompt, FactcheckPrompt and DelegatePrompt replace the
	// default prompts of each job kind (DefaultValidatePrompt, ...). A
	// template must define "user", the user message; "system", if
	// defined, is the system message. Each is executed with a
	// [PromptData]. Nil means the default.
	ValidatePrompt  *template.Template
	FactcheckPrompt *template.Template
	DelegatePrompt  *template.Template

	// DisableSchema, if true, never asks for structured output: the
	// answer is always read from the reply's text. When false, the worker
	// sends response_format with a JSON schema and, if the endpoint
	// rejects it with 400 or 422 while the same request without it
	// succeeds, stops sending it for the rest of the worker's life.
	DisableSchema bool
	// DisableLogprobs, if true, never asks for logprobs. When false, a
	// validation or a fact check asks for them (logprobs, top_logprobs
	// 1), and the run's evidence records the probability the model put
	// on its verdict (Call.VerdictProbability) beside the confidence it
	// wrote; an endpoint that rejects them with 400 or 422, while the
	// same request without them succeeds, is not asked again.
	DisableLogprobs bool

	// HTTPClient sends the requests; nil means a new pooled client
	// without a timeout (the job's context bounds each call). The worker
	// uses a copy that refuses a redirect to another scheme or host: the
	// request carries the key and the headers.
	HTTPClient *http.Client
	// MaxRetries is how many times a request is repeated after a
	// connection failure, a 429 or a 5xx; 0 means DefaultMaxRetries and a
	// negative value means none.
	MaxRetries int
	// RetryWaitMin and RetryWaitMax bound the pause between tries: it
	// doubles from RetryWaitMin up to RetryWaitMax, or is the endpoint's
	// Retry-After. A pause longer than RetryWaitMax, or one that would
	// end after the job's deadline, ends the retries at once. Zero means
	// DefaultRetryWaitMin and DefaultRetryWaitMax.
	RetryWaitMin, RetryWaitMax time.Duration

	// Logger receives a debug record per call and per retry, and a
	// warning when the endpoint rejects structured output. Nil is silent.
	Logger *slog.Logger
}

// String returns "chatworker.Config(<model> at <base URL>)", the base URL
// without the password of its user info and its query; it never shows
// the key or the headers' values.
func (c Config) String() string {
	return "chatworker.Config(" + c.Model + " at " + httpapi.ShownURL(c.BaseURL) + ")"
}

// GoString is String, so that %#v does not print the key either.
func (c Config) GoString() string { return c.String() }

// LogValue is c as String shows it, so that a log never records the key.
func (c Config) LogValue() slog.Value { return slog.StringValue(c.String()) }

// Price is what a model costs per 1,000 tokens, in the host's currency
// unit.
type Price struct {
	// PromptPer1K is the price of 1,000 prompt (input) tokens.
	PromptPer1K float64 `json:"prompt_per_1k" yaml:"prompt_per_1k" validate:"gte=0"`
	// CompletionPer1K is the price of 1,000 completion (output) tokens.
	CompletionPer1K float64 `json:"completion_per_1k" yaml:"completion_per_1k" validate:"gte=0"`
}

// Cost returns the price of the given token counts.
func (p Price) Cost(promptTokens, completionTokens int64) float64 {
	return (float64(promptTokens)*p.PromptPer1K + float64(completionTokens)*p.CompletionPer1K) / 1000
}

// Worker is a [router.Worker] that runs each job as one chat-completions
// call: a judge prompt for validations and fact checks, the objective and
// input for delegations. Build it with [New]. It is safe for concurrent
// use.
type Worker struct {
	endpoint    string // BaseURL + "/chat/completions"
	host        string // endpoint host for evidence and errors
	model       string
	apiKey      string
	temp        *float64
	maxTokens   int
	headers     http.Header
	prices      map[string]Price
	prompts     map[router.Kind]*template.Template
	useSchema   bool
	useLogprobs bool
	http        *http.Client
	retries     int
	waitMin     time.Duration
	waitMax     time.Duration
	log         *slog.Logger
	schema      option // response_format, as the endpoint takes it
	logprobs    option // logprobs, as the endpoint takes them
}

// New returns a worker for cfg, or an error wrapping ErrInvalidConfig that
// names the bad field. New copies what it keeps: later changes to cfg's
// maps and headers do not reach the worker.
func New(cfg Config) (*Worker, error) {
	bad := func(format string, args ...any) error {
		return &configError{msg: fmt.Sprintf(format, args...)}
	}
	u, err := url.Parse(cfg.BaseURL)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, bad("BaseURL must be an absolute http or https URL, got %q", httpapi.ShownURL(cfg.BaseURL))
	}
	if u.Fragment != "" {
		return nil, fieldError("BaseURL", "", "must not have a fragment")
	}
	if strings.TrimSpace(cfg.Model) == "" {
		return nil, bad("Model is required")
	}
	if t := cfg.Temperature; t != nil && !(*t >= 0 && *t <= 2) {
		return nil, bad("Temperature must be between 0 and 2, got %v", *t)
	}
	if cfg.MaxTokens < 0 {
		return nil, bad("MaxTokens must not be negative, got %d", cfg.MaxTokens)
	}
	if cfg.RetryWaitMin < 0 || cfg.RetryWaitMax < 0 {
		return nil, bad("RetryWaitMin and RetryWaitMax must not be negative")
	}
	for model, p := range cfg.Prices {
		if !(p.PromptPer1K >= 0 && p.CompletionPer1K >= 0) || math.IsInf(p.PromptPer1K+p.CompletionPer1K, 0) {
			return nil, bad("Prices[%q] must be finite and not negative", model)
		}
	}
	spelt := make(map[string]string, len(cfg.Headers)) // canonical name → a name as given
	for _, name := range slices.Sorted(maps.Keys(cfg.Headers)) {
		if !validHeaderName(name) {
			return nil, fieldError("Headers", name, fmt.Sprintf("%q is not a valid header name", name))
		}
		// A request sends one header of each name, whatever the case:
		// two spellings would leave one of their values out, picked by
		// the order of a map.
		if other, dup := spelt[http.CanonicalHeaderKey(name)]; dup {
			return nil, fieldError("Headers", name, fmt.Sprintf("%q and %q name the same header, as header names match regardless of case: give it once", other, name))
		}
		spelt[http.CanonicalHeaderKey(name)] = name
		for _, v := range cfg.Headers[name] {
			if strings.ContainsAny(v, "\r\n\x00") {
				return nil, &configError{msg: fmt.Sprintf("Headers[%q] holds a line break or NUL", name),
					field: "Headers", key: name, reason: "holds a line break or NUL", inValue: true}
			}
		}
	}
	if strings.ContainsAny(cfg.APIKey, "\r\n\x00") {
		return nil, &configError{msg: "APIKey holds a line break or NUL", field: "APIKey", reason: "holds a line break or NUL", inValue: true}
	}

	w := &Worker{
		host:        u.Host,
		model:       cfg.Model,
		apiKey:      cfg.APIKey,
		maxTokens:   cfg.MaxTokens,
		headers:     cfg.Headers.Clone(),
		useSchema:   !cfg.DisableSchema,
		useLogprobs: !cfg.DisableLogprobs,
		http:        cfg.HTTPClient,
		retries:     cfg.MaxRetries,
		waitMin:     cfg.RetryWaitMin,
		waitMax:     cfg.RetryWaitMax,
		log:         cfg.Logger,
	}
	if cfg.Temperature != nil {
		t := *cfg.Temperature
		w.temp = &t
	}
	w.prices = maps.Clone(cfg.Prices)
	u.Path = strings.TrimSuffix(u.Path, "/") + "/chat/completions"
	u.RawPath = ""
	w.endpoint = u.String()
	if w.http == nil {
		w.http = &http.Client{}
		if t, ok := http.DefaultTransport.(*http.Transport); ok {
			w.http.Transport = t.Clone() // its own connection pool
		}
	}
	w.http = httpapi.SameOrigin(w.http)
	switch {
	case w.retries == 0:
		w.retries = DefaultMaxRetries
	case w.retries < 0:
		w.retries = 0
	}
	if w.waitMin == 0 {
		w.waitMin = DefaultRetryWaitMin
	}
	if w.waitMax == 0 {
		w.waitMax = DefaultRetryWaitMax
	}
	if w.waitMax < w.waitMin {
		return nil, bad("RetryWaitMax (%s) is shorter than RetryWaitMin (%s)", w.waitMax, w.waitMin)
	}
	if w.log == nil {
		w.log = slog.New(slog.DiscardHandler)
	}
	if w.prompts, err = prompts(cfg); err != nil {
		return nil, &configError{msg: err.Error()}
	}
	return w, nil
}

// configError is an error of [New]: it unwraps to ErrInvalidConfig.
// When one field of Config is at fault, field names it, key the header
// it concerns (for Headers), and reason says what is wrong without them;
// inValue reports whether the fault is in the value rather than the name.
// A panel file's error names the file's own field with them.
type configError struct {
	msg                string
	field, key, reason string
	inValue            bool
}

// fieldError returns the configError of Config's field, of its header
// key when the field is Headers, for reason.
func fieldError(field, key, reason string) *configError {
	msg := field + " " + reason
	if field == "Headers" {
		msg = field + ": " + reason
	}
	return &configError{msg: msg, field: field, key: key, reason: reason}
}

func (e *configError) Error() string { return ErrInvalidConfig.Error() + ": " + e.msg }
func (e *configError) Unwrap() error { return ErrInvalidConfig }

// String returns "chatworker.Worker(<model> at <host>)"; it never shows the
// key or the headers.
func (w *Worker) String() string {
	return fmt.Sprintf("chatworker.Worker(%s at %s)", w.model, w.host)
}

// GoString is String, so that %#v does not print the key either.
func (w *Worker) GoString() string { return w.String() }

// Model returns the configured model.
func (w *Worker) Model() string { return w.model }

// Host returns the endpoint's host (and port).
func (w *Worker) Host() string { return w.host }

// Call is the evidence of one chat-completions call. The one step of every
// result holds it as JSON in Step.Output.
type Call struct {
	// Model is the model that answered (the reply's model, else the one
	// asked).
	Model string `json:"model"`
	// Host is the endpoint's host (and port), never its key.
	Host string `json:"host"`
	// LatencyMS is the call's duration in milliseconds, retries included.
	LatencyMS int64 `json:"latency_ms"`
	// Attempts is the number of requests sent.
	Attempts int `json:"attempts"`
	// StructuredOutput is true when the answer was asked for with a JSON
	// schema (response_format).
	StructuredOutput bool `json:"structured_output"`
	// Logprobs is true when the token probabilities were asked for.
	Logprobs bool `json:"logprobs"`
	// VerdictProbability is the probability the model put on the
	// verdict it wrote (the product over the verdict's tokens), measured
	// from logprobs, beside the confidence it stated (the run's
	// confidence); absent when not known.
	VerdictProbability *float64 `json:"verdict_probability,omitempty"`
	// AnswerNotes says, in notes separated by "; ", what the answer
	// broke after a complete verdict, which kept its vote: a confidence
	// missing or outside [0, 1] (the run then records none), reasons
	// that are not a list of strings (dropped), or a reply that ends (cut
	// at max_tokens) or stops being JSON after the verdict. Empty when
	// the answer kept its contract.
	AnswerNotes string `json:"answer_notes,omitempty"`
	// FinishReason is the choice's finish_reason, such as "stop".
	FinishReason string `json:"finish_reason,omitempty"`
	// PromptTokens and CompletionTokens are the reply's usage counts.
	PromptTokens     int64 `json:"prompt_tokens"`
	CompletionTokens int64 `json:"completion_tokens"`
	// Cost is the price of the tokens from the price table, or 0.
	Cost float64 `json:"cost"`
}

// Work runs job as one chat-completions call and turns the reply into a
// result: for a validation or a fact check the verdict, confidence and
// reasons the model gave; for a delegation the reply's text, without
// surrounding white space, as Output (a string), unless the endpoint cut
// the reply at max_tokens (a *ResponseError wrapping [ErrCutReply]).
// Result.Model, Result.Usage and a step holding the [Call] are the
// evidence.
//
// ctx bounds the whole call, retries included: when it is cancelled, as
// when early quorum decides a version 3 call, the request in flight is
// cancelled and Work returns an error wrapping ctx's error. A reply that
// cannot become a result is a [*ResponseError], returned beside a result
// that holds only Model and Usage when the reply reported its usage (the
// tokens were spent all the same; the engine records them as the failed
// run's usage); a non-2xx answer is a [*StatusError]; a job the worker
// cannot run wraps ErrUnsupportedJob. A verdict is never guessed.
func (w *Worker) Work(ctx context.Context, job *router.Job) (*router.Result, error) {
	if job == nil {
		return nil, fmt.Errorf("%w: nil job", ErrUnsupportedJob)
	}
	var schema *jsonSchema
	switch job.Kind {
	case router.KindValidate:
		if job.Claim == nil {
			return nil, fmt.Errorf("%w: a validate job without a claim", ErrUnsupportedJob)
		}
		schema = answerSchema("vouch_validate", verdicts(job.Kind))
	case router.KindFactcheck:
		if strings.TrimSpace(job.Statement) == "" {
			return nil, fmt.Errorf("%w: a factcheck job without a statement", ErrUnsupportedJob)
		}
		schema = answerSchema("vouch_factcheck", verdicts(job.Kind))
	case router.KindDelegate:
		if strings.TrimSpace(job.Objective) == "" {
			return nil, fmt.Errorf("%w: a delegate job without an objective", ErrUnsupportedJob)
		}
	default:
		return nil, fmt.Errorf("%w: kind %q", ErrUnsupportedJob, job.Kind)
	}
	msgs, err := render(w.prompts[job.Kind], job)
	if err != nil {
		return nil, err
	}

	rep, call, err := w.complete(ctx, msgs, schema)
	if err != nil {
		return spent(rep, call), err
	}
	res := &router.Result{Model: call.Model}
	if rep.usage {
		res.Usage = &router.Usage{PromptTokens: call.PromptTokens, CompletionTokens: call.CompletionTokens, Cost: call.Cost}
	}
	cut := call.FinishReason == finishLength
	if job.Kind == router.KindDelegate {
		if cut { // a part of the answer, which would vote as the whole
			return spent(rep, call), &ResponseError{Model: w.model, Host: w.host, Err: ErrCutReply, Raw: w.scrub(rep.content, RawLimit)}
		}
		res.Output = strings.TrimSpace(rep.content)
	} else {
		a, aerr := parseAnswer(rep.content, verdicts(job.Kind))
		if aerr != nil {
			detail := aerr.detail
			if cut {
				detail = strings.TrimPrefix(detail+"; "+cutDetail, "; ")
			}
			return spent(rep, call), &ResponseError{Model: w.model, Host: w.host, Err: aerr.err, Detail: detail, Raw: w.scrub(rep.content, RawLimit)}
		}
		res.Verdict, res.Confidence, res.Reasons = a.Verdict, a.Confidence, a.Reasons
		call.AnswerNotes = strings.Join(a.Notes, "; ")
		if p, ok := verdictProbability(rep.tokens, rep.content, a.verdictAt, a.verdictEnd); ok {
			call.VerdictProbability = &p
		}
	}
	step, err := json.Marshal(call)
	if err != nil {
		return nil, fmt.Errorf("chatworker: encoding the call's evidence: %w", err)
	}
	res.Steps = []router.Step{{
		Description: fmt.Sprintf("chat completion by %s at %s", call.Model, call.Host),
		Output:      step,
	}}
	return res, nil
}

// spent returns what a call whose reply became no result reports beside
// its error: the model and the usage the reply reported, or nil when it
// reported none (or no reply came).
func spent(rep reply, call Call) *router.Result {
	if !rep.usage {
		return nil
	}
	return &router.Result{Model: call.Model, Usage: &router.Usage{
		PromptTokens: call.PromptTokens, CompletionTokens: call.CompletionTokens, Cost: call.Cost}}
}

// finishLength is the finish_reason of a reply the endpoint cut at
// max_tokens, and cutDetail what a ResponseError says of it.
const (
	finishLength = "length"
	cutDetail    = "the reply was cut at max_tokens (finish_reason: length)"
)

// verdicts lists the verdicts a judging kind may return.
func verdicts(k router.Kind) []router.Verdict {
	if k == router.KindFactcheck {
		return []router.Verdict{router.VerdictTrue, router.VerdictFalse}
	}
	return []router.Verdict{router.VerdictValid, router.VerdictInvalid, router.VerdictRetry, router.VerdictNeedsSpec}
}

func (w *Worker) cost(model string, prompt, completion int64) float64 {
	if p, ok := w.prices[model]; ok {
		return p.Cost(prompt, completion)
	}
	if p, ok := w.prices[w.model]; ok {
		return p.Cost(prompt, completion)
	}
	return 0
}

// validHeaderName reports whether name is an HTTP token (RFC 9110, 5.6.2).
func validHeaderName(name string) bool {
	if name == "" {
		return false
	}
	for i := 0; i < len(name); i++ {
		c := name[i]
		if c <= ' ' || c >= 0x7f || strings.IndexByte(`"(),/:;<=>?@[\]{}`, c) >= 0 {
			return false
		}
	}
	return true
}
