package router_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/vouchkit/vouch/internal/jsonbody"
	"github.com/vouchkit/vouch/problem"
	"github.com/vouchkit/vouch/router"
)

// fuzzLimit is the body limit of the fuzz targets, small enough that the
// fuzzer reaches it.
const fuzzLimit = 4096

// request is a pointer to a request type.
type request[T any] interface {
	*T
	Validate() error
}

// fuzzRequest checks the decoding contract of one request type on any
// body: decoding plus validation never panics; an error is a
// *problem.Details with status 400 or 413 whose field errors name JSON
// paths; and a request that validates encodes to JSON that decodes to an
// equal request, which validates again.
func fuzzRequest[T any, P request[T]](f *testing.F) {
	f.Fuzz(func(t *testing.T, body []byte) {
		var first T
		err := jsonbody.Decode(bytes.NewReader(body), fuzzLimit, P(&first))
		if err == nil {
			err = P(&first).Validate()
		}
		if err != nil {
			checkProblem(t, err)
			return
		}
		enc, err := json.Marshal(P(&first))
		if err != nil {
			t.Fatalf("encoding a valid request: %v", err)
		}
		var second T
		if err := jsonbody.Unmarshal(enc, P(&second)); err != nil {
			t.Fatalf("decoding the encoding %s of a valid request: %v", enc, err)
		}
		if diff := cmp.Diff(&first, &second, wireOpts); diff != "" {
			t.Fatalf("decode(encode(v)) differs from v (-v +decoded):\n%s\nencoding: %s", diff, enc)
		}
		if err := P(&second).Validate(); err != nil {
			t.Fatalf("the re-decoded request does not validate: %v\nencoding: %s", err, enc)
		}
	})
}

// checkProblem fails unless err is a well-formed decoding or validation
// problem.
func checkProblem(t *testing.T, err error) {
	t.Helper()
	var p *problem.Details
	if !errors.As(err, &p) {
		t.Fatalf("error %v (%T) is not a *problem.Details", err, err)
	}
	switch {
	case p.Status == 413 && p.Code == problem.CodeBodyTooLarge:
	case p.Status == 400 && p.Code == problem.CodeMalformedJSON:
	case p.Status == 400 && p.Code == problem.CodeInvalidRequest:
		if len(p.Errors) == 0 {
			t.Fatalf("invalid_request without field errors: %v", p)
		}
		for _, fe := range p.Errors {
			if fe.Field == "" || fe.Rule == "" || fe.Message == "" {
				t.Fatalf("incomplete field error %+v", fe)
			}
			// JSON paths use the snake_case names of the wire; a capital
			// letter or a NUL would be a Go field name leaking through.
			// A repeated member (rule unique) is named as the input wrote
			// it, whatever its case, so its path is exempt.
			if fe.Rule != "unique" && strings.ContainsAny(fe.Field, "ABCDEFGHIJKLMNOPQRSTUVWXYZ\x00") {
				t.Fatalf("field path %q is not a JSON path", fe.Field)
			}
		}
	default:
		t.Fatalf("unexpected problem %d %s: %v", p.Status, p.Code, p)
	}
	if p.Detail == "" || p.Type != problem.TypePrefix+string(p.Code) {
		t.Fatalf("problem without detail or with type %q: %v", p.Type, p)
	}
}

func FuzzDelegateV1Request(f *testing.F)  { fuzzRequest[router.DelegateV1Request](f) }
func FuzzValidateV1Request(f *testing.F)  { fuzzRequest[router.ValidateV1Request](f) }
func FuzzDelegateV2Request(f *testing.F)  { fuzzRequest[router.DelegateV2Request](f) }
func FuzzValidateV2Request(f *testing.F)  { fuzzRequest[router.ValidateV2Request](f) }
func FuzzDelegateV3Request(f *testing.F)  { fuzzRequest[router.DelegateV3Request](f) }
func FuzzValidateV3Request(f *testing.F)  { fuzzRequest[router.ValidateV3Request](f) }
func FuzzFactcheckRequest(f *testing.F)   { fuzzRequest[router.FactcheckRequest](f) }
func FuzzFactcheckV1Request(f *testing.F) { fuzzRequest[router.FactcheckV1Request](f) }
func FuzzFeedbackRequest(f *testing.F)    { fuzzRequest[router.FeedbackRequest](f) }
