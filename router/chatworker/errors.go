package chatworker

import (
	"errors"
	"fmt"
	"net/http"
	"strings"
	"time"
)

// Sentinel errors. A [*ResponseError] unwraps to one of the reply errors, a
// [*PanelError] to ErrInvalidPanel or ErrMissingEnv.
var (
	// ErrInvalidConfig reports a [Config] that [New] cannot use.
	ErrInvalidConfig = errors.New("chatworker: invalid config")
	// ErrUnsupportedJob reports a job the worker cannot run: an unknown
	// kind, or a validation without a claim, a fact check without a
	// statement, a delegation without an objective.
	ErrUnsupportedJob = errors.New("chatworker: unsupported job")

	// ErrMalformedReply reports a reply body that is not a chat completion.
	ErrMalformedReply = errors.New("chatworker: the reply is not a chat completion")
	// ErrNoChoices reports a chat completion with an empty choice list.
	ErrNoChoices = errors.New("chatworker: the reply has no choices")
	// ErrRefusal reports a model that refused to answer (message.refusal).
	ErrRefusal = errors.New("chatworker: the model refused to answer")
	// ErrEmptyContent reports a reply whose message has no text.
	ErrEmptyContent = errors.New("chatworker: the reply has no content")
	// ErrNoAnswer reports a reply with no JSON object holding a complete
	// verdict.
	ErrNoAnswer = errors.New("chatworker: no JSON answer in the reply")
	// ErrCutReply reports a delegation's reply that the endpoint cut at
	// max_tokens (finish_reason "length"): a part of the answer, which
	// is not read as the whole.
	ErrCutReply = errors.New("chatworker: the reply was cut at max_tokens (finish_reason: length)")
	// ErrBadAnswer reports a JSON answer whose verdict breaks the answer
	// contract: not a string, a verdict the job does not allow, or two
	// verdicts that differ in one answer, or a reply whose verdict
	// depends on which </think> tag, if any, ends a reasoning model's
	// thoughts. What breaks after a complete verdict does not fail the
	// answer; it is written in Call.AnswerNotes.
	ErrBadAnswer = errors.New("chatworker: the answer breaks the contract")

	// ErrInvalidPanel reports a panel file that cannot be used.
	ErrInvalidPanel = errors.New("chatworker: invalid panel file")
	// ErrMissingEnv reports a panel session whose api_key_env names an
	// environment variable that is unset or empty.
	ErrMissingEnv = errors.New("chatworker: environment variable not set")
)

// RawLimit is the most bytes of a reply a [*ResponseError] keeps.
const RawLimit = 1024

// ResponseError reports a reply that cannot become a result: malformed,
// without choices, a refusal, empty, or without a usable answer. The engine
// records such a replica as ERROR; Raw is the evidence of what the model
// said. Err is one of ErrMalformedReply, ErrNoChoices, ErrRefusal,
// ErrEmptyContent, ErrCutReply, ErrNoAnswer or ErrBadAnswer, and
// errors.Is finds it. A judgement's reply that the endpoint cut at
// max_tokens before its verdict was complete, and an empty reply it cut
// (a reasoning model that spent max_tokens on its thoughts), say so in
// Detail.
type ResponseError struct {
	// Model is the model asked.
	Model string
	// Host is the endpoint's host (and port).
	Host string
	// Err says what was wrong with the reply.
	Err error
	// Detail adds what the answer broke, for ErrBadAnswer, and that the
	// reply was cut at max_tokens, for a judgement's reply or an empty
	// reply (ErrEmptyContent) that was; otherwise empty.
	Detail string
	// Raw is the reply's text (the refusal for ErrRefusal, the message
	// content or the body otherwise), with the API key and the headers'
	// values replaced by "[REDACTED]", cut to at most RawLimit bytes.
	Raw string
}

// Error returns the reason followed by the model, the host, and the raw
// reply in quotes.
func (e *ResponseError) Error() string {
	var b strings.Builder
	b.WriteString(e.Err.Error())
	if e.Detail != "" {
		b.WriteString(": ")
		b.WriteString(e.Detail)
	}
	fmt.Fprintf(&b, " (%s at %s): reply %q", e.Model, e.Host, e.Raw)
	return b.String()
}

// Unwrap returns Err.
func (e *ResponseError) Unwrap() error { return e.Err }

// StatusError reports an answer of the endpoint with a status other than
// 2xx, after any retries. 429 and 5xx are retried before a StatusError is
// returned; other statuses are not.
type StatusError struct {
	// Model is the model asked.
	Model string
	// Host is the endpoint's host (and port).
	Host string
	// StatusCode is the HTTP status of the last answer.
	StatusCode int
	// Message is the endpoint's error message (its error.message member,
	// or the start of the body), with the API key and the headers' values
	// removed.
	Message string
	// RetryAfter is the last answer's Retry-After, or 0. It is set when
	// the endpoint asked for a pause longer than the worker would wait.
	RetryAfter time.Duration
	// Attempts is the number of requests sent.
	Attempts int
}

// Error names the status, the model, the host, the attempts and the
// endpoint's message.
func (e *StatusError) Error() string {
	s := fmt.Sprintf("chatworker: %s at %s: HTTP %d %s after %d attempt(s)",
		e.Model, e.Host, e.StatusCode, http.StatusText(e.StatusCode), e.Attempts)
	if e.RetryAfter > 0 {
		s += fmt.Sprintf(" (retry after %s)", e.RetryAfter)
	}
	if e.Message != "" {
		s += ": " + e.Message
	}
	return s
}
