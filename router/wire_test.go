package router_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/vouchkit/vouch/problem"
	"github.com/vouchkit/vouch/router"
)

// wireOpts compares decoded wire values by JSON meaning: an Input or a
// json.RawMessage equals another that holds the same JSON value, whatever
// its spacing or escaping, and an empty slice or map equals a missing one
// (omitempty drops them on the way out).
var wireOpts = cmp.Options{
	cmp.Comparer(func(a, b router.Input) bool {
		return a.Kind() == b.Kind() && jsonEqual(a.Raw(), b.Raw())
	}),
	cmp.FilterValues(func(a, b json.RawMessage) bool { return len(a) > 0 || len(b) > 0 },
		cmp.Comparer(func(a, b json.RawMessage) bool { return jsonEqual(a, b) })),
	cmpopts.EquateEmpty(),
}

// jsonEqual reports whether a and b hold the same JSON value. Numbers are
// compared by their text, so 1 and 1.0 differ: a round trip must keep the
// text of a number.
func jsonEqual(a, b []byte) bool {
	va, errA := decodeAny(a)
	vb, errB := decodeAny(b)
	if errA != nil || errB != nil {
		return errA != nil && errB != nil && bytes.Equal(a, b)
	}
	return cmp.Equal(va, vb)
}

func decodeAny(data []byte) (any, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	var v any
	err := dec.Decode(&v)
	return v, err
}

// readTestdata returns the contents of testdata/name.
func readTestdata(t testing.TB, name string) []byte {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	return data
}

// patch returns the JSON object of testdata/file with the member at path
// (dot-separated object keys) set to the raw JSON value, or removed when
// value is "".
func patch(t testing.TB, file, path, value string) []byte {
	t.Helper()
	var root map[string]any
	dec := json.NewDecoder(bytes.NewReader(readTestdata(t, file)))
	dec.UseNumber()
	if err := dec.Decode(&root); err != nil {
		t.Fatal(err)
	}
	keys := strings.Split(path, ".")
	obj := root
	for _, k := range keys[:len(keys)-1] {
		next, ok := obj[k].(map[string]any)
		if !ok {
			next = map[string]any{}
			obj[k] = next
		}
		obj = next
	}
	last := keys[len(keys)-1]
	if value == "" {
		delete(obj, last)
	} else {
		if !json.Valid([]byte(value)) {
			t.Fatalf("patch value %q is not JSON", value)
		}
		obj[last] = json.RawMessage(value)
	}
	out, err := json.Marshal(root)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// fieldRule is the part of a field error that a test pins exactly.
type fieldRule struct{ Field, Rule string }

// asProblem returns err as a *problem.Details, failing the test otherwise.
func asProblem(t testing.TB, err error) *problem.Details {
	t.Helper()
	var p *problem.Details
	if !errors.As(err, &p) {
		t.Fatalf("error %v (%T) is not a *problem.Details", err, err)
	}
	return p
}

// fieldRules returns the field errors of err as sorted field/rule pairs.
func fieldRules(t testing.TB, err error) []fieldRule {
	t.Helper()
	p := asProblem(t, err)
	if p.Status != 400 || p.Code != problem.CodeInvalidRequest {
		t.Fatalf("problem = %d %s, want 400 %s", p.Status, p.Code, problem.CodeInvalidRequest)
	}
	var out []fieldRule
	for _, fe := range p.Errors {
		if fe.Message == "" {
			t.Errorf("field error %s/%s has no message", fe.Field, fe.Rule)
		}
		out = append(out, fieldRule{fe.Field, fe.Rule})
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].Field != out[j].Field {
			return out[i].Field < out[j].Field
		}
		return out[i].Rule < out[j].Rule
	})
	return out
}

// validator is the method set every request type has.
type validator interface{ Validate() error }

// TestRoutes checks the route table against sections 4.1 and 4.2 and the
// public router's routes (ROUTER-NOTES, section 1): twelve routes for
// versions 1 and 2 in three variants, three for version 3 in the normal
// variant only, factcheck v1 in three variants each with its fact-check
// alias, and ping (normal and x402), about and status.
func TestRoutes(t *testing.T) {
	const post, get = "POST", "GET"
	N, T, X := router.VariantNormal, router.VariantTrial, router.VariantX402
	want := []router.Route{
		{Op: router.OpDelegateV1, Variant: N, Method: post, Path: "/api/v1/delegate"},
		{Op: router.OpDelegateV1, Variant: T, Method: post, Path: "/api/v1/trial/delegate"},
		{Op: router.OpDelegateV1, Variant: X, Method: post, Path: "/api/v1/x402/delegate"},
		{Op: router.OpValidateV1, Variant: N, Method: post, Path: "/api/v1/validate"},
		{Op: router.OpValidateV1, Variant: T, Method: post, Path: "/api/v1/trial/validate"},
		{Op: router.OpValidateV1, Variant: X, Method: post, Path: "/api/v1/x402/validate"},
		{Op: router.OpFactcheckV1, Variant: N, Method: post, Path: "/api/v1/factcheck"},
		{Op: router.OpFactcheckV1, Variant: N, Method: post, Path: "/api/v1/fact-check", Alias: true},
		{Op: router.OpFactcheckV1, Variant: T, Method: post, Path: "/api/v1/trial/factcheck"},
		{Op: router.OpFactcheckV1, Variant: T, Method: post, Path: "/api/v1/trial/fact-check", Alias: true},
		{Op: router.OpFactcheckV1, Variant: X, Method: post, Path: "/api/v1/x402/factcheck"},
		{Op: router.OpFactcheckV1, Variant: X, Method: post, Path: "/api/v1/x402/fact-check", Alias: true},
		{Op: router.OpDelegateV2, Variant: N, Method: post, Path: "/api/v2/delegate"},
		{Op: router.OpDelegateV2, Variant: T, Method: post, Path: "/api/v2/trial/delegate"},
		{Op: router.OpDelegateV2, Variant: X, Method: post, Path: "/api/v2/x402/delegate"},
		{Op: router.OpValidateV2, Variant: N, Method: post, Path: "/api/v2/validate"},
		{Op: router.OpValidateV2, Variant: T, Method: post, Path: "/api/v2/trial/validate"},
		{Op: router.OpValidateV2, Variant: X, Method: post, Path: "/api/v2/x402/validate"},
		{Op: router.OpDelegateV3, Variant: N, Method: post, Path: "/api/v3/delegate"},
		{Op: router.OpValidateV3, Variant: N, Method: post, Path: "/api/v3/validate"},
		{Op: router.OpFactcheck, Variant: N, Method: post, Path: "/api/v3/factcheck"},
		{Op: router.OpPing, Variant: N, Method: get, Path: "/api/v1/ping", Public: true},
		{Op: router.OpPing, Variant: X, Method: get, Path: "/api/v1/x402/ping"},
		{Op: router.OpAbout, Variant: N, Method: get, Path: "/api/v1/about", Public: true},
		{Op: router.OpStatus, Variant: N, Method: get, Path: "/api/v1/status"},
		{Op: router.OpFeedback, Variant: N, Method: post, Path: "/api/v3/feedback"},
	}
	got := router.Routes()
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("Routes() (-want +got):\n%s", diff)
	}
	// Each call returns a fresh table: changing one leaves the next intact.
	got[0].Path = "/changed"
	if again := router.Routes(); again[0].Path != "/api/v1/delegate" {
		t.Errorf("Routes() after a caller changed an earlier result: %q", again[0].Path)
	}
	seen := map[string]bool{}
	for _, r := range want {
		if seen[r.Path] {
			t.Errorf("path %s appears twice", r.Path)
		}
		seen[r.Path] = true
		if r.Alias {
			continue
		}
		p, ok := router.RoutePath(r.Op, r.Variant)
		if !ok || p != r.Path {
			t.Errorf("RoutePath(%s, %s) = %q, %v; want %q, true", r.Op, r.Variant, p, ok, r.Path)
		}
	}
}

// TestRoutePath_absent checks the combinations that have no route.
func TestRoutePath_absent(t *testing.T) {
	for _, tc := range []struct {
		op router.Operation
		v  router.Variant
	}{
		{router.OpDelegateV3, router.VariantTrial},
		{router.OpDelegateV3, router.VariantX402},
		{router.OpValidateV3, router.VariantTrial},
		{router.OpValidateV3, router.VariantX402},
		{router.OpFactcheck, router.VariantTrial},
		{router.OpFactcheck, router.VariantX402},
		{router.OpPing, router.VariantTrial},
		{router.OpAbout, router.VariantTrial},
		{router.OpAbout, router.VariantX402},
		{router.OpStatus, router.VariantTrial},
		{router.OpStatus, router.VariantX402},
		{router.OpDelegateV1, "paid"},
		{"completions_v1", router.VariantNormal},
		{"", ""},
	} {
		if p, ok := router.RoutePath(tc.op, tc.v); ok || p != "" {
			t.Errorf("RoutePath(%q, %q) = %q, %v; want \"\", false", tc.op, tc.v, p, ok)
		}
	}
}

// TestRoutePath_zeroVariant checks that the zero variant means normal.
func TestRoutePath_zeroVariant(t *testing.T) {
	for _, r := range router.Routes() {
		if r.Variant != router.VariantNormal || r.Alias {
			continue
		}
		if p, ok := router.RoutePath(r.Op, ""); !ok || p != r.Path {
			t.Errorf("RoutePath(%s, \"\") = %q, %v; want %q", r.Op, p, ok, r.Path)
		}
	}
}

// TestVariantFrom checks that WithVariant's value is what VariantFrom
// reads, and that a context without one reads "".
func TestVariantFrom(t *testing.T) {
	ctx := context.Background()
	if v := router.VariantFrom(ctx); v != "" {
		t.Errorf("VariantFrom(Background) = %q, want \"\"", v)
	}
	ctx = router.WithVariant(ctx, router.VariantTrial)
	if v := router.VariantFrom(ctx); v != router.VariantTrial {
		t.Errorf("VariantFrom = %q, want trial", v)
	}
	if v := router.VariantFrom(router.WithVariant(ctx, router.VariantX402)); v != router.VariantX402 {
		t.Errorf("inner WithVariant: VariantFrom = %q, want x402", v)
	}
}
