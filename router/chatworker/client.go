package chatworker

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"net/http"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/hashicorp/go-retryablehttp"

	"github.com/vouchkit/vouch/internal/openaihttp"
)

// maxReply bounds the body of a reply read from the endpoint.
const maxReply = 8 << 20

// maxErrorBody bounds the body of an error answer read for its message.
const maxErrorBody = 64 << 10

// The chat-completions wire: only the members the worker sends or reads.

type chatRequest struct {
	Model          string          `json:"model"`
	Messages       []message       `json:"messages"`
	Temperature    *float64        `json:"temperature,omitempty"`
	MaxTokens      int             `json:"max_tokens,omitempty"`
	ResponseFormat *responseFormat `json:"response_format,omitempty"`
	Logprobs       bool            `json:"logprobs,omitempty"`
	TopLogprobs    int             `json:"top_logprobs,omitempty"`
}

type message struct {
	Role    string `json:"role"`
	Content string `json:"content"`
}

type responseFormat struct {
	Type       string      `json:"type"` // "json_schema"
	JSONSchema *jsonSchema `json:"json_schema"`
}

type chatResponse struct {
	Model   string `json:"model"`
	Choices []struct {
		Message struct {
			Content *replyContent `json:"content"`
			Refusal *string       `json:"refusal"`
		} `json:"message"`
		FinishReason string `json:"finish_reason"`
		Logprobs     *struct {
			Content []tokenLogprob `json:"content"`
		} `json:"logprobs"`
	} `json:"choices"`
	Usage *struct {
		PromptTokens     int64 `json:"prompt_tokens"`
		CompletionTokens int64 `json:"completion_tokens"`
	} `json:"usage"`
}

// replyContent is the content of a reply's message: a string, or an
// array of parts, the newer form some servers send, whose text parts
// ({"type":"text","text":"..."}) are read in order and joined as they are;
// other parts (images, audio, refusals) are ignored.
type replyContent string

// UnmarshalJSON reads a string or an array of parts.
func (c *replyContent) UnmarshalJSON(data []byte) error {
	if len(data) == 0 || data[0] != '[' {
		return json.Unmarshal(data, (*string)(c))
	}
	var parts []json.RawMessage
	if err := json.Unmarshal(data, &parts); err != nil {
		return err
	}
	var b strings.Builder
	for i, raw := range parts {
		var p struct {
			Type string          `json:"type"`
			Text json.RawMessage `json:"text"` // read for a text part only
		}
		if err := json.Unmarshal(raw, &p); err != nil {
			return fmt.Errorf("content part %d: %w", i, err)
		}
		if p.Type != "text" {
			continue
		}
		var text string
		if err := json.Unmarshal(p.Text, &text); err != nil {
			return fmt.Errorf("content part %d, a text part without a string text: %w", i, err)
		}
		b.WriteString(text)
	}
	*c = replyContent(b.String())
	return nil
}

// tokenLogprob is one token of a reply with its log probability.
type tokenLogprob struct {
	Token   string  `json:"token"`
	Logprob float64 `json:"logprob"`
	Bytes   []int   `json:"bytes"` // the token's UTF-8 bytes, where sent
}

// reply is the usable part of a chat completion.
type reply struct {
	content string
	tokens  []tokenLogprob // nil unless logprobs were asked for and sent
	usage   bool           // whether the reply reported its usage
}

// topLogprobs is the top_logprobs asked for with logprobs: the fewest an
// endpoint returns the sampled token's probability for.
const topLogprobs = 1

// option is a request member the endpoint may reject, learned once: off
// when the endpoint rejected it and the same request without it
// succeeded, seen when a request with it succeeded (a later 400 is then
// about something else).
type option struct{ off, seen atomic.Bool }

// variant says which optional members a request carries.
type variant struct{ schema, logprobs bool }

// complete sends msgs, asking for schema when it is non-nil and the
// endpoint takes it, and for logprobs with it when the endpoint takes
// them, and returns the reply with the call's evidence. When the
// endpoint answered with a reply it cannot read, the error comes with
// the call's evidence and whether the reply reported its usage. A 400 or 422 to a
// request with a member the endpoint has never taken is asked again
// without it: without logprobs, then without the schema, then without
// both; what succeeds is remembered for the worker's life.
func (w *Worker) complete(ctx context.Context, msgs []message, schema *jsonSchema) (reply, Call, error) {
	start := time.Now()
	want := variant{
		schema:   schema != nil && w.useSchema && !w.schema.off.Load(),
		logprobs: schema != nil && w.useLogprobs && !w.logprobs.off.Load(),
	}
	tries := []variant{want}
	dropLogprobs := want.logprobs && !w.logprobs.seen.Load()
	if dropLogprobs {
		tries = append(tries, variant{schema: want.schema})
	}
	if want.schema && !w.schema.seen.Load() {
		tries = append(tries, variant{logprobs: want.logprobs})
		if dropLogprobs {
			tries = append(tries, variant{})
		}
	}
	var (
		resp     *decodedResponse
		attempts int
		err      error
		used     variant
		rejected *StatusError
	)
	for _, v := range tries {
		used = v
		req := chatRequest{Model: w.model, Messages: msgs, Temperature: w.temp, MaxTokens: w.maxTokens}
		if v.schema {
			req.ResponseFormat = &responseFormat{Type: "json_schema", JSONSchema: schema}
		}
		if v.logprobs {
			req.Logprobs, req.TopLogprobs = true, topLogprobs
		}
		var n int
		resp, n, err = w.send(ctx, &req)
		attempts += n
		var se *StatusError
		if !errors.As(err, &se) || (se.StatusCode != http.StatusBadRequest && se.StatusCode != http.StatusUnprocessableEntity) {
			break
		}
		rejected = se
	}
	var se *StatusError
	if errors.As(err, &se) {
		se.Attempts = attempts // across every round
	}
	call := Call{Model: w.model, Host: w.host, LatencyMS: time.Since(start).Milliseconds(), Attempts: attempts,
		StructuredOutput: used.schema, Logprobs: used.logprobs}
	if err != nil {
		w.log.DebugContext(ctx, "chatworker: call failed", "model", w.model, "host", w.host, "attempts", attempts, "error", err)
		return reply{}, call, err
	}
	w.learn(ctx, &w.schema, want.schema, used.schema, rejected, "structured output; reading answers from text")
	w.learn(ctx, &w.logprobs, want.logprobs, used.logprobs, rejected, "logprobs; recording no verdict probability")
	if resp.Model != "" {
		call.Model = resp.Model
	}
	if resp.Usage != nil {
		call.PromptTokens, call.CompletionTokens = resp.Usage.PromptTokens, resp.Usage.CompletionTokens
		call.Cost = w.cost(call.Model, call.PromptTokens, call.CompletionTokens)
	}
	w.log.DebugContext(ctx, "chatworker: call done", "model", call.Model, "host", w.host, "attempts", attempts,
		"latency_ms", call.LatencyMS, "prompt_tokens", call.PromptTokens, "completion_tokens", call.CompletionTokens)

	// A reply that cannot be read still reports what it cost.
	unread := reply{usage: resp.Usage != nil}
	if len(resp.Choices) == 0 {
		return unread, call, w.responseError(ErrNoChoices, resp.raw)
	}
	ch := resp.Choices[0]
	call.FinishReason = ch.FinishReason
	if r := ch.Message.Refusal; r != nil && strings.TrimSpace(*r) != "" {
		return unread, call, w.responseError(ErrRefusal, *r)
	}
	if c := ch.Message.Content; c == nil || strings.TrimSpace(string(*c)) == "" {
		re := w.responseError(ErrEmptyContent, resp.raw)
		if ch.FinishReason == finishLength { // as a reasoning model that spent max_tokens thinking
			re.Detail = cutDetail
		}
		return unread, call, re
	}
	rep := reply{content: string(*ch.Message.Content), usage: resp.Usage != nil}
	if used.logprobs && ch.Logprobs != nil {
		rep.tokens = ch.Logprobs.Content
	}
	return rep, call, nil
}

// learn records what a successful request taught about an optional
// member: seen if it was sent, off if it was wanted but had to be left
// out after rejected.
func (w *Worker) learn(ctx context.Context, o *option, wanted, sent bool, rejected *StatusError, what string) {
	switch {
	case sent:
		o.seen.Store(true)
	case wanted && rejected != nil && !o.off.Swap(true):
		w.log.WarnContext(ctx, "chatworker: endpoint rejects "+what,
			"model", w.model, "host", w.host, "status", rejected.StatusCode, "message", rejected.Message)
	}
}

// verdictProbability is the probability the model put on the text at
// content[at:end] (its verdict): the product of the probabilities of the
// tokens that overlap it. The tokens spell content, or a text that holds
// content: llama.cpp's server answers a reply the model began with a code
// fence with the JSON alone as content, and a server that moves a
// reasoning model's thoughts out of content may still list their tokens
// first. The verdict is then read where content last appears in the
// tokens, or where content up to end last does when they do not spell all
// of it: the answer ends what the model wrote, and the thoughts may hold a
// draft that begins as the answer does. It is unknown (false) when the
// tokens do not spell content up to end, or when one of them has a log
// probability above 0, which no probability has.
func verdictProbability(tokens []tokenLogprob, content string, at, end int) (float64, bool) {
	texts := make([]string, len(tokens))
	var all strings.Builder
	for i, t := range tokens {
		texts[i] = t.Token
		if t.Bytes != nil {
			b := make([]byte, len(t.Bytes))
			for j, c := range t.Bytes {
				b[j] = byte(c)
			}
			texts[i] = string(b)
		}
		all.WriteString(texts[i])
	}
	shift := strings.LastIndex(all.String(), content)
	if shift < 0 {
		shift = strings.LastIndex(all.String(), content[:end])
	}
	if shift < 0 {
		return 0, false
	}
	at, end = at+shift, end+shift
	p, off := 1.0, 0
	for i, t := range tokens {
		if off < end && off+len(texts[i]) > at {
			if t.Logprob > 0 {
				return 0, false
			}
			p *= math.Exp(t.Logprob)
		}
		off += len(texts[i])
		if off >= end {
			return p, off > at
		}
	}
	return 0, false
}

func (w *Worker) responseError(err error, raw string) *ResponseError {
	return &ResponseError{Model: w.model, Host: w.host, Err: err, Raw: w.scrub(raw, RawLimit)}
}

// scrub returns s without the API key and the headers' values, cut to at
// most n bytes: what of an endpoint's answer an error may show, since an
// endpoint (or whatever answers at its URL) may echo the request.
func (w *Worker) scrub(s string, n int) string {
	return openaihttp.Scrub(s, n, w.apiKey, w.headers)
}

// decodedResponse is a chat completion with the body it came from.
type decodedResponse struct {
	chatResponse
	raw string
}

// send posts req with retries and decodes the reply. It returns the number
// of requests sent.
func (w *Worker) send(ctx context.Context, req *chatRequest) (*decodedResponse, int, error) {
	body, err := json.Marshal(req)
	if err != nil {
		return nil, 0, fmt.Errorf("chatworker: encoding the request: %w", err)
	}
	resp, attempts, err := openaihttp.Post(ctx, openaihttp.PostConfig{
		Client: w.http, URL: w.endpoint, Body: body, APIKey: w.apiKey, Headers: w.headers,
		WaitMin: w.waitMin, WaitMax: w.waitMax, Retries: w.retries, Backoff: backoff,
		Retry: func(ctx context.Context, resp *http.Response, attempts int, pause time.Duration) bool {
			status := 0
			if resp != nil {
				status = resp.StatusCode
			}
			w.log.DebugContext(ctx, "chatworker: retrying", "model", w.model, "host", w.host,
				"attempt", attempts, "status", status, "pause", pause)
			return true
		},
		Package: "chatworker", Model: w.model, Host: w.host,
	})
	if err != nil {
		return nil, attempts, err
	}
	defer resp.Body.Close()

	if retryable(resp.StatusCode) && ctx.Err() != nil {
		// The context ended as the answer came, and ended the retries.
		return nil, attempts, fmt.Errorf("chatworker: %s at %s: call cut short after %d attempt(s), the last answered %d: %w",
			w.model, w.host, attempts, resp.StatusCode, context.Cause(ctx))
	}
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		data, _ := io.ReadAll(io.LimitReader(resp.Body, maxErrorBody))
		se := &StatusError{
			Model: w.model, Host: w.host, StatusCode: resp.StatusCode,
			Message: w.scrub(openaihttp.ErrorMessage(data), openaihttp.MaxMessage), Attempts: attempts,
		}
		if ra, ok := retryAfter(resp); ok {
			se.RetryAfter = ra
		}
		return nil, attempts, se
	}
	data, err := io.ReadAll(io.LimitReader(resp.Body, maxReply+1))
	if err != nil {
		if ctx.Err() != nil {
			return nil, attempts, fmt.Errorf("chatworker: %s at %s: reading the reply cut short: %w", w.model, w.host, context.Cause(ctx))
		}
		return nil, attempts, fmt.Errorf("chatworker: %s at %s: reading the reply: %w", w.model, w.host, err)
	}
	if len(data) > maxReply {
		return nil, attempts, &ResponseError{Model: w.model, Host: w.host, Err: ErrMalformedReply,
			Detail: fmt.Sprintf("reply larger than %d bytes", maxReply), Raw: w.scrub(string(data), RawLimit)}
	}
	out := &decodedResponse{raw: string(data)}
	if err := json.Unmarshal(data, &out.chatResponse); err != nil {
		return nil, attempts, &ResponseError{Model: w.model, Host: w.host, Err: ErrMalformedReply,
			Detail: err.Error(), Raw: w.scrub(string(data), RawLimit)}
	}
	return out, attempts, nil
}

// retryable reports whether an answer of status is retried (as
// retryablehttp.DefaultRetryPolicy decides): 429, or 5xx but 501.
func retryable(status int) bool {
	return status == http.StatusTooManyRequests || status >= 500 && status != http.StatusNotImplemented
}

// backoff is retryablehttp's exponential backoff, except that a
// Retry-After on any retried status (429 or 5xx) sets the pause.
func backoff(min, max time.Duration, attempt int, resp *http.Response) time.Duration {
	if resp != nil {
		if ra, ok := retryAfter(resp); ok {
			return ra
		}
	}
	return retryablehttp.DefaultBackoff(min, max, attempt, resp)
}

// retryAfter reads the Retry-After of a 429 or 5xx answer: delay seconds or
// an HTTP date (RFC 9110, 10.2.3). A date in the past is a pause of 0.
func retryAfter(resp *http.Response) (time.Duration, bool) {
	if resp.StatusCode != http.StatusTooManyRequests && resp.StatusCode < 500 {
		return 0, false
	}
	h := strings.TrimSpace(resp.Header.Get("Retry-After"))
	if h == "" {
		return 0, false
	}
	if secs, err := strconv.ParseInt(h, 10, 64); err == nil {
		if secs < 0 || secs > int64(24*time.Hour/time.Second) {
			return 0, false
		}
		return time.Duration(secs) * time.Second, true
	}
	t, err := http.ParseTime(h)
	if err != nil {
		return 0, false
	}
	return max(time.Until(t), 0), true
}
