package embedkey

import (
	"errors"
	"fmt"
	"net/http"
)

// Sentinel errors, matched with errors.Is.
var (
	// ErrInvalidConfig reports a [Config] that [New] cannot use.
	ErrInvalidConfig = errors.New("embedkey: invalid config")
	// ErrMalformedReply reports a reply body that is not an embeddings
	// list.
	ErrMalformedReply = errors.New("embedkey: the reply is not an embeddings list")
	// ErrBadVectors reports embeddings that do not match the inputs: a
	// count other than the inputs', an index out of range or repeated,
	// dimensions that differ, or a zero vector.
	ErrBadVectors = errors.New("embedkey: the embeddings do not match the inputs")
)

// StatusError reports an endpoint that answered with a status other than
// 2xx, after any retries.
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
	// Attempts is the number of requests sent.
	Attempts int
}

// Error names the status, the model, the host, the attempts and the
// endpoint's message.
func (e *StatusError) Error() string {
	s := fmt.Sprintf("embedkey: %s at %s: HTTP %d %s after %d attempt(s)",
		e.Model, e.Host, e.StatusCode, http.StatusText(e.StatusCode), e.Attempts)
	if e.Message != "" {
		s += ": " + e.Message
	}
	return s
}
