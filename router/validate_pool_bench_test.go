package router

import "testing"

// BenchmarkV3Decode_sessionPool measures what the checks for a top-level
// session_pool and for unknown members of consensus.tolerance cost the
// decoding of a version 3 validate body whose pool sits, rightly, in
// consensus (so the checks parse the body again): the decoder with the
// checks against the same decoder without them.
func BenchmarkV3Decode_sessionPool(b *testing.B) {
	body := []byte(`{"request_id":"r-1","claim":{"type":"summary","description":"a one-line summary","output":"Refunds within 30 days."},` +
		`"policy":{"tier":"safe","rules":["consistency"]},"context":{"task_input":"Refunds within 30 days, at most 2 a year."},` +
		`"consensus":{"replicas":3,"session_pool":[201,202,203],"disagreement_policy":"best_effort"}}`)
	for _, tc := range []struct {
		name string
		d    decoder
	}{
		{"without-check", decodeWith(Service.ValidateV3)},
		{"with-check", refusingKnownMistakes(decodeWith(Service.ValidateV3))},
	} {
		b.Run(tc.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if _, err := tc.d(nil, body); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
