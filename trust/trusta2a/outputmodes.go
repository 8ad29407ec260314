package trusta2a

import (
	"context"
	"fmt"
	"mime"
	"slices"
	"strings"

	"github.com/a2aproject/a2a-go/a2a"
)

// The media types of an answer's artifact parts: the answer as a data
// part, and its summary as a text part.
const (
	dataMode = "application/json"
	textMode = "text/plain"
)

// accepts reports whether modes, a configuration's acceptedOutputModes,
// admit a part of mode: an empty list admits any, a media range (*/*,
// text/*) the types it covers.
func accepts(modes []string, mode string) bool {
	if len(modes) == 0 {
		return true
	}
	typ, _, _ := strings.Cut(mode, "/")
	return slices.ContainsFunc(modes, func(m string) bool {
		mt, _, err := mime.ParseMediaType(m)
		return err == nil && (mt == mode || mt == typ+"/*" || mt == "*/*")
	})
}

// outputModesViolation names field, acceptedOutputModes of modes, when
// they admit neither part of an answer; nil when they admit one.
func outputModesViolation(field string, modes []string) *fieldViolation {
	if accepts(modes, dataMode) || accepts(modes, textMode) {
		return nil
	}
	return &fieldViolation{Field: field, Description: fmt.Sprintf("%q admit no part of the answer: it is %s (the answer) and %s (its summary)",
		modes, dataMode, textMode)}
}

// modesKey is the key of a message's acceptedOutputModes in the context
// the executor answers it on.
type modesKey struct{}

// withOutputModes returns ctx carrying modes, the acceptedOutputModes of
// the message the executor answers on it.
func withOutputModes(ctx context.Context, modes []string) context.Context {
	if len(modes) == 0 {
		return ctx
	}
	return context.WithValue(ctx, modesKey{}, modes)
}

// acceptedParts returns the parts of an answer's artifact that the
// acceptedOutputModes ctx carries admit (all when it carries none).
func acceptedParts(ctx context.Context, parts a2a.ContentParts) a2a.ContentParts {
	modes, _ := ctx.Value(modesKey{}).([]string)
	return slices.DeleteFunc(parts, func(p a2a.Part) bool {
		switch p.(type) {
		case a2a.DataPart:
			return !accepts(modes, dataMode)
		case a2a.TextPart:
			return !accepts(modes, textMode)
		}
		return false
	})
}
