package trustmcp

import (
	"encoding/json"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/jsonschema-go/jsonschema"
)

// explicit writes every boolean schema as an object of the same meaning,
// wherever it is, and lists an object's members in propertyNames.
func TestExplicit(t *testing.T) {
	var s jsonschema.Schema
	if err := json.Unmarshal([]byte(`{"type":"object",
		"properties":{"a":true,"b":{"type":"array","items":false},"c":{"anyOf":[{"type":"string"},true]}},
		"additionalProperties":false,
		"$defs":{"d":{"type":"object","additionalProperties":false}}}`), &s); err != nil {
		t.Fatal(err)
	}
	explicit(&s)
	got, err := json.Marshal(s)
	if err != nil {
		t.Fatal(err)
	}
	want := `{"type":"object",
		"properties":{"a":{"description":"any JSON value"},
			"b":{"type":"array","items":{"description":"no value: nothing is allowed here","not":{"description":"any JSON value"}}},
			"c":{"anyOf":[{"type":"string"},{"description":"any JSON value"}]}},
		"propertyNames":{"description":"the only members allowed","enum":["a","b","c"]},
		"$defs":{"d":{"type":"object","additionalProperties":{"description":"no value: nothing is allowed here","not":{"description":"any JSON value"}}}}}`
	var g, w any
	if err := json.Unmarshal(got, &g); err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal([]byte(want), &w); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(w, g); diff != "" {
		t.Errorf("explicit (-want +got):\n%s", diff)
	}
}
