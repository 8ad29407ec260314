package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"strings"

	"github.com/vouchkit/vouch/receipt"
)

// missing returns one line that says what the command line lacks or
// holds in excess, or "" when it is complete. growth tells a check of the
// log's growth (-old, -new, -consistency) from a check of a receipt.
func missing(o options, growth bool) string {
	switch {
	case growth:
		var given, absent []string
		for _, f := range []struct{ name, value string }{{"-old", o.oldCheckpoint}, {"-new", o.newCheckpoint}, {"-consistency", o.consistency}} {
			if f.value == "" {
				absent = append(absent, f.name)
			} else {
				given = append(given, f.name)
			}
		}
		if len(absent) > 0 {
			verb := "is"
			if len(absent) > 1 {
				verb = "are"
			}
			return fmt.Sprintf("%s %s required with %s", and(absent), verb, and(given))
		}
		if len(o.files) > 0 {
			return fmt.Sprintf("-old, -new and -consistency check the log's growth and take no receipt file, got %s", strings.Join(o.files, " "))
		}
		if f := receiptFlag(o); f != "" {
			return f + " applies to a receipt, not to -old, -new and -consistency"
		}
	case len(o.files) == 0:
		return "no receipt file given"
	case len(o.files) > 1:
		return fmt.Sprintf("one receipt file at a time, got %d: %s", len(o.files), strings.Join(o.files, " "))
	}
	if len(o.keys) == 0 && o.keyFile == "" {
		return "no trusted key: give -key KEY or -keys FILE"
	}
	return ""
}

// receiptFlag returns the first flag set that applies to a receipt only.
func receiptFlag(o options) string {
	for _, f := range []struct {
		name string
		set  bool
	}{
		{"-proof", o.proof != ""}, {"-input", o.input != ""}, {"-input-text", o.inputText != ""},
		{"-output", o.output != ""}, {"-output-text", o.outputText != ""},
		{"-allow-expired", o.allowExpired}, {"-at", o.at != ""},
	} {
		if f.set {
			return f.name
		}
	}
	return ""
}

// and joins names as "a", "a and b", "a, b and c".
func and(names []string) string {
	if len(names) < 2 {
		return strings.Join(names, "")
	}
	return strings.Join(names[:len(names)-1], ", ") + " and " + names[len(names)-1]
}

// trustedKeys reads -key and -keys.
func trustedKeys(o options) ([]receipt.PublicKey, error) {
	var trusted []receipt.PublicKey
	if o.keyFile != "" {
		f, err := receipt.ReadKeyFile(o.keyFile)
		if err != nil {
			return nil, fmt.Errorf("-keys %s: %w", o.keyFile, err)
		}
		if trusted, err = f.Trusted(); err != nil {
			return nil, fmt.Errorf("-keys %s: %w", o.keyFile, err)
		}
	}
	for _, k := range o.keys {
		key, err := readKey(k)
		if err != nil {
			return nil, err
		}
		trusted = append(trusted, key)
	}
	return trusted, nil
}

// readKey reads a key given inline or as a file name. A value that is
// neither names both failures, so that a mistyped file name is not
// reported as a malformed key alone.
func readKey(s string) (receipt.Ed25519Key, error) {
	b, ferr := os.ReadFile(s)
	switch {
	case ferr == nil:
		key, err := receipt.ParseEd25519Key(string(b))
		if err != nil {
			return nil, fmt.Errorf("-key %s: %w", s, err)
		}
		return key, nil
	case !errors.Is(ferr, os.ErrNotExist):
		return nil, fmt.Errorf("-key %s: %w", s, ferr)
	}
	key, err := receipt.ParseEd25519Key(s)
	if err != nil {
		return nil, fmt.Errorf("-key: %w, nor a file holding one: %w", err, ferr)
	}
	return key, nil
}

// original reads the file of -input (JSON) or -input-text (a string), or
// of -output or -output-text, as flag says; nil when neither is given.
func original(flag, jsonFile, textFile string) (json.RawMessage, error) {
	switch {
	case jsonFile != "" && textFile != "":
		return nil, fmt.Errorf("give -%s or -%s-text, not both", flag, flag)
	case jsonFile != "":
		b, err := os.ReadFile(jsonFile)
		if err != nil {
			return nil, fmt.Errorf("-%s: %w", flag, err)
		}
		if !json.Valid(b) {
			return nil, fmt.Errorf("-%s: %s is not JSON; give plain text with -%s-text", flag, jsonFile, flag)
		}
		return b, nil
	case textFile != "":
		b, err := os.ReadFile(textFile)
		if err != nil {
			return nil, fmt.Errorf("-%s-text: %w", flag, err)
		}
		return json.Marshal(string(b))
	}
	return nil, nil
}

// textHint returns what to add to a failed hash check of a -input-text
// or -output-text file: that the file's whole content counts, a final
// newline included, and, when the content without its final newline has
// the receipt's hash, that this is the difference.
func textHint(flag, name, want string) string {
	b, err := os.ReadFile(name)
	if err != nil {
		return ""
	}
	if trimmed, ok := bytes.CutSuffix(b, []byte("\n")); ok {
		trimmed = bytes.TrimSuffix(trimmed, []byte("\r"))
		if got, err := receipt.Hash(string(trimmed)); err == nil && got == want {
			return fmt.Sprintf("; %s hashes the whole file, and without its final newline it matches: write it without one (printf '%%s', not echo)", flag)
		}
	}
	return fmt.Sprintf("; %s hashes the file's whole content, a final newline included", flag)
}
