package trusta2a

import (
	"encoding/json"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestFromText reads each form into the members it binds.
func TestFromText(t *testing.T) {
	tests := []struct {
		text, skill string
		want        map[string]string // member: its JSON
	}{
		{`Validate the claimed result "17 * 3 = 51" for the task "What is 17 * 3?"`, SkillValidateClaim,
			map[string]string{"claimed_result": `"17 * 3 = 51"`, "input": `"What is 17 * 3?"`, "policy": `"safe"`}},
		{`VALIDATE THE CLAIMED RESULT "say \"hi\"" with receipt detached and policy adaptive.`, SkillValidateClaim,
			map[string]string{"claimed_result": `"say \"hi\""`, "policy": `"adaptive"`, "receipt": `"detached"`}},
		{`Is “17 * 3 = 50” a correct answer to “What is 17 * 3?”?`, SkillValidateClaim,
			map[string]string{"claimed_result": `"17 * 3 = 50"`, "input": `"What is 17 * 3?"`, "policy": `"safe"`}},
		{`Delegate the task "17 * 3" with policy oracle`, SkillDelegateTask,
			map[string]string{"input": `"17 * 3"`, "policy": `"oracle"`}},
		{`The seller delivered "50"; the buyer says "it is 51"`, SkillArbitrate,
			map[string]string{"claimed_result": `"50"`, "dispute_context": `"it is 51"`, "policy": `"safe"`}},
		{"Is it true that Paris is in France?", SkillFactcheck, map[string]string{"claim": "Paris is in France", "replicas": "3"}},
		{`fact-check "17 * 3 = 51" with mode realtime and replicas 5`, SkillFactcheck,
			map[string]string{"claim": "17 * 3 = 51", "mode": "realtime", "replicas": "5"}},
	}
	for _, tt := range tests {
		c, err := fromText(tt.text)
		if err != nil {
			t.Errorf("%q: %v", tt.text, err)
			continue
		}
		got := map[string]string{}
		if c.factcheck != nil {
			got["claim"], got["replicas"] = c.factcheck.Claim, string(jsonOf(c.factcheck.Consensus.Replicas))
			if c.factcheck.Mode != "standard" {
				got["mode"] = string(c.factcheck.Mode)
			}
		} else {
			task := c.trust.Task
			for k, v := range map[string][]byte{"claimed_result": task.ClaimedResult, "dispute_context": task.DisputeContext, "input": jsonOf(task.Input)} {
				if len(v) > 0 && string(v) != "null" {
					got[k] = string(v)
				}
			}
			got["policy"] = string(jsonOf(c.trust.Policy))
			if c.trust.Receipt.Mode != "" {
				got["receipt"] = string(jsonOf(c.trust.Receipt.Mode))
			}
			if c.skill == SkillDelegateTask {
				delete(got, "claimed_result")
			}
		}
		if c.skill != tt.skill {
			t.Errorf("%q: skill %s, want %s", tt.text, c.skill, tt.skill)
		}
		if diff := cmp.Diff(tt.want, got); diff != "" {
			t.Errorf("%q (-want +got):\n%s", tt.text, diff)
		}
	}
}

func jsonOf(v any) []byte {
	b, _ := json.Marshal(v)
	return b
}
