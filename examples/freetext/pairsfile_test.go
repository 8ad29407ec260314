package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/vouchkit/vouch/router/embedkey/embedkeytest"
)

// TestMeasurePairs_fileThatMeasuresNothing gives -pairs files from which
// no figure can be read: none of checkPairs' verdicts can fail on them,
// so a pass would say the guard and the model did their jobs when nothing
// was measured. Each must be an error naming the file.
func TestMeasurePairs_fileThatMeasuresNothing(t *testing.T) {
	srv := embedkeytest.NewServer(func(string) []float64 { return []float64{1, 0} })
	defer srv.Close()
	for _, tc := range []struct{ name, content string }{
		{"no pairs", `[]`},
		{"members misnamed, so every text is empty", `[{"first":"Paris is in France.","second":"Paris is not in France.","same":false},{"first":"x","second":"y","same":true}]`},
		{"no changed fact", `[{"a":"Paris is the capital of France.","b":"The capital of France is Paris.","same":true}]`},
		{"no paraphrase", `[{"a":"Paris is the capital of France.","b":"Lyon is the capital of France.","same":false}]`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			file := filepath.Join(t.TempDir(), "pairs.json")
			if err := os.WriteFile(file, []byte(tc.content), 0o600); err != nil {
				t.Fatal(err)
			}
			var b strings.Builder
			err := measurePairs(t.Context(), &b, file, srv.URL+"/v1", "same", []float64{0.9})
			if err == nil || !strings.Contains(err.Error(), file) {
				t.Errorf("err = %v, want one naming %s; table:\n%s", err, file, b.String())
			}
		})
	}
}
