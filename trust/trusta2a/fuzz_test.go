package trusta2a

import (
	"encoding/json"
	"errors"
	"testing"
)

// checkCall fails unless c, err is a call the services accept or an
// *InputError.
func checkCall(t *testing.T, c *call, err error) {
	t.Helper()
	if err != nil {
		var ie *InputError
		if !errors.As(err, &ie) || ie.Argument == "" || ie.Message == "" {
			t.Fatalf("%v is not an *InputError naming an argument", err)
		}
		return
	}
	switch {
	case c.trust != nil && c.factcheck == nil:
		if err := c.trust.Validate(); err != nil {
			t.Fatalf("%s built an invalid trust request: %v", c.skill, err)
		}
	case c.factcheck != nil && c.trust == nil:
		if err := c.factcheck.Validate(); err != nil {
			t.Fatalf("%s built an invalid factcheck request: %v", c.skill, err)
		}
	default:
		t.Fatalf("call %+v is neither a trust call nor a factcheck", c)
	}
}

// FuzzFromText reads any text as a message's text part: it must never
// panic, and must build a request the services accept or refuse it with
// an *InputError.
func FuzzFromText(f *testing.F) {
	for _, s := range []string{
		`Validate the claimed result "17 * 3 = 51" for the task "What is 17 * 3?" with policy oracle and receipt inline`,
		`Is "17 * 3 = 50" a correct answer to "What is 17 * 3?"`,
		`The seller delivered “17 * 3 = 50”; the buyer says "wrong \"really\"". Who is right?`,
		`Is it true that 17 * 3 = 51?`,
		`Fact-check "17 * 3 = 50" with replicas 5 and mode realtime`,
		`{"claimed_result":"x","policy":"fast"}`,
		`Delegate the task "\ud800"`,
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, text string) {
		c, err := fromText(text)
		checkCall(t, c, err)
	})
}

// FuzzFromData reads any JSON object as a message's data part, as the
// SDK hands it over.
func FuzzFromData(f *testing.F) {
	for _, s := range []string{
		`{"claimed_result":{"answer":51},"input":{"q":"17 * 3"},"spec":"integer product","policy":"oracle","receipt":"inline"}`,
		`{"skill":"arbitrate","claimed_result":"x","dispute_context":{"buyer":"no"}}`,
		`{"claim":"17 * 3 = 51","mode":"realtime","replicas":"5"}`,
		`{"objective":"multiply","input":{"kind":"array","items":[1,2]}}`,
		`{"input":null,"claimed_result":1e300}`,
		`{"input":"how many?","answer":"number","tolerance":{"absolute":0.5,"relative":0.01}}`,
		`{"input":"x","answer":"number","tolerance":{"abs":1,"absolute":-1}}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, raw []byte) {
		var data map[string]any
		if json.Unmarshal(raw, &data) != nil {
			return
		}
		c, err := fromData(data)
		checkCall(t, c, err)
	})
}
