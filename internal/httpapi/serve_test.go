package httpapi_test

import (
	"testing"

	"github.com/vouchkit/vouch/internal/httpapi"
)

func TestIsJSON(t *testing.T) {
	for ct, want := range map[string]bool{
		"application/json":                  true,
		"application/json; charset=utf-8":   true,
		"Application/JSON; charset=UTF-8":   true,
		"application/problem+json":          true,
		"application/json; charset=utf-16":  false,
		"application/json; charset=latin1":  false,
		"text/plain":                        false,
		"application/x-www-form-urlencoded": false,
		"application/json; charset":         false,
		"":                                  false,
	} {
		if got := httpapi.IsJSON(ct); got != want {
			t.Errorf("IsJSON(%q) = %t, want %t", ct, got, want)
		}
	}
}
