// Package secrettest checks, in tests, that a value never shows its
// secrets where programs print values: fmt's verbs and log/slog's text
// and JSON handlers.
package secrettest

import (
	"bytes"
	"fmt"
	"log/slog"
	"strings"
	"testing"
)

// Shown returns v as each way of printing it writes it, keyed by the
// way: "fmt" (the verbs %v, %+v, %#v, %s, %x and %q), "slog text" and
// "slog json" (v as the value of one attribute). Pass a pointer and the
// value it points to apart: their methods may differ.
func Shown(v any) map[string]string {
	var text, js bytes.Buffer
	slog.New(slog.NewTextHandler(&text, nil)).Info("shown", "v", v)
	slog.New(slog.NewJSONHandler(&js, nil)).Info("shown", "v", v)
	return map[string]string{
		"fmt":       fmt.Sprintf("%v|%+v|%#v|%s|%x|%q", v, v, v, v, v, v),
		"slog text": text.String(),
		"slog json": js.String(),
	}
}

// Hidden reports an error on t for each secret that a way of printing
// v shows (see [Shown]).
func Hidden(t testing.TB, v any, secrets ...string) {
	t.Helper()
	for how, s := range Shown(v) {
		for _, secret := range secrets {
			if strings.Contains(s, secret) {
				t.Errorf("%T printed by %s shows %q: %s", v, how, secret, s)
			}
		}
	}
}
