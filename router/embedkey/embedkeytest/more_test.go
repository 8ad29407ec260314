package embedkeytest_test

import (
	"context"
	"encoding/json"
	"math"
	"strings"
	"testing"

	"github.com/vouchkit/vouch/router/embedkey"
	"github.com/vouchkit/vouch/router/embedkey/embedkeytest"
)

// TestNewServer_reportsAVectorItCannotSend: when the test's embed
// function returns a vector JSON cannot carry (a NaN, as a normalised
// zero vector gives), the server says so (a 500 naming the cause), and does
// not answer 200 with an empty body, which the code under test reports as
// a malformed reply of the endpoint, a fault that is the test's own.
func TestNewServer_reportsAVectorItCannotSend(t *testing.T) {
	srv := embedkeytest.NewServer(func(string) []float64 { return []float64{math.NaN(), 1} })
	defer srv.Close()
	g, err := embedkey.New(embedkey.Config{BaseURL: srv.URL + "/v1", Model: "m", MaxRetries: -1})
	if err != nil {
		t.Fatal(err)
	}
	_, err = g.Group(context.Background(), []json.RawMessage{[]byte(`"a"`), []byte(`"b"`)})
	if err == nil {
		t.Fatal("Group succeeded on a NaN vector")
	}
	if !strings.Contains(err.Error(), "NaN") && !strings.Contains(err.Error(), "unsupported value") && !strings.Contains(err.Error(), "500") {
		t.Errorf("error %q does not name the NaN the test's embed returned; the server answered 200 with an empty body", err)
	}
}
