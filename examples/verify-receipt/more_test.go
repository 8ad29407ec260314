package main

import "testing"

// TestParseProof_everyMemberRequired: parseProof's doc says "every member
// is required". A proof answer without inclusion_proof, or with trailing
// data after the object, should be refused as "not a proof" (exit 2,
// naming the file), not read as an empty proof that then fails the
// inclusion check (exit 1, "inclusion failed"), which blames the log.
func TestParseProof_everyMemberRequired(t *testing.T) {
	for _, body := range []string{
		`{"log_index":0,"tree_size":3,"checkpoint":"x"}`,
		`{"log_index":0,"tree_size":3,"inclusion_proof":null,"checkpoint":"x"}`,
		`{"log_index":0,"tree_size":3,"inclusion_proof":[],"checkpoint":"x"}{"log_index":5}`,
	} {
		if p, err := parseProof([]byte(body)); err == nil {
			t.Errorf("parseProof(%s) = %+v, nil; want an error", body, p)
		}
	}
}
