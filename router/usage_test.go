package router

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestTotalUsage(t *testing.T) {
	tests := []struct {
		name string
		runs []Run
		want *Usage
	}{
		{"no runs", nil, nil},
		{"none reports", []Run{{Label: LabelOK}, {Label: LabelError}}, nil},
		{"sums the reporting runs", []Run{
			{Usage: &Usage{PromptTokens: 100, CompletionTokens: 20, Cost: 0.5}},
			{Label: LabelCancelled},
			{Usage: &Usage{PromptTokens: 50, CompletionTokens: 5, Cost: 0.25}},
		}, &Usage{PromptTokens: 150, CompletionTokens: 25, Cost: 0.75}},
	}
	for _, tt := range tests {
		if diff := cmp.Diff(tt.want, TotalUsage(tt.runs)); diff != "" {
			t.Errorf("%s: TotalUsage (-want +got):\n%s", tt.name, diff)
		}
	}
}
