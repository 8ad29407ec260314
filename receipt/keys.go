package receipt

import (
	"bytes"
	"crypto/ed25519"
	"crypto/rand"
	"crypto/x509"
	"encoding/hex"
	"encoding/json"
	"encoding/pem"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/go-json-experiment/json/jsontext"

	"github.com/vouchkit/vouch/internal/jsonbody"
	"github.com/vouchkit/vouch/problem"
)

// KeyFile is a receipt signing key with its history: the current key,
// whose private half signs new receipts (and log checkpoints), and the
// retired keys, public halves only, each with the window in which it
// signed. Receipts signed by a retired key stay verifiable for as long as
// they live, and no receipt dated outside a key's window verifies under
// it.
//
// On disk it is JSON (see [ParseKeyFile]):
//
//	{
//	  "keys": [
//	    {"issuer": "ed25519:<base64url public key>",
//	     "not_before": "2026-01-01T00:00:00Z",
//	     "not_after": "2026-06-01T00:00:00Z"},
//	    {"issuer": "ed25519:<base64url public key>",
//	     "private_key": "<64 hex digits: the Ed25519 seed>",
//	     "not_before": "2026-06-01T00:00:00Z"}
//	  ]
//	}
//
// issuer is the key id that receipts carry in signing.issuer. not_before
// and not_after (RFC 3339) bound the timestamps of the receipts the key
// may sign: not_before <= decision.timestamp < not_after; an absent
// not_after means the key is current. Exactly one key is current, it is
// listed last, and a file that signs holds its private_key. A file
// without any private_key is a trust file: what verifiers are given
// ([KeyFile.Public]). To rotate, call [KeyFile.Rotate] and write the file
// back; the server flag -rotate-signing-key does that.
type KeyFile struct {
	Keys []FileKey `json:"keys"`
}

// FileKey is one key of a [KeyFile].
type FileKey struct {
	// Issuer is "ed25519:" and the public key in unpadded base64url.
	Issuer string `json:"issuer"`
	// PrivateKey is the Ed25519 seed in hex; only the current key of a
	// signing file has it.
	PrivateKey string `json:"private_key,omitempty"`
	// NotBefore is the first instant the key may sign at.
	NotBefore time.Time `json:"not_before"`
	// NotAfter, when set, ends the key's window: it signs nothing dated
	// at or after it.
	NotAfter *time.Time `json:"not_after,omitempty"`
}

// String describes k without its private key: its issuer, its window,
// and whether it holds its private key, as in
// "ed25519:... (2026-06-01T00:00:00Z to now, private key held)".
func (k FileKey) String() string {
	tk := TrustedKey{NotBefore: k.NotBefore}
	if k.NotAfter != nil {
		tk.NotAfter = *k.NotAfter
	}
	s := k.Issuer + " (" + tk.window()
	if k.PrivateKey != "" {
		s += ", private key held"
	}
	return s + ")"
}

// GoString is String, so that %#v does not print the private key either.
func (k FileKey) GoString() string { return k.String() }

// LogValue is k as String describes it, so that a log never records the
// private key.
func (k FileKey) LogValue() slog.Value { return slog.StringValue(k.String()) }

// LogValue lists f's keys as [FileKey.String] describes them, so that a
// log never records a private key. (fmt shows each key by its String.)
func (f KeyFile) LogValue() slog.Value {
	keys := make([]string, len(f.Keys))
	for i, k := range f.Keys {
		keys[i] = k.String()
	}
	return slog.AnyValue(keys)
}

// NewKeyFile returns a key file holding one new current key, valid from
// now on, with randomness from rand (nil means crypto/rand).
func NewKeyFile(now time.Time, rand io.Reader) (*KeyFile, error) {
	f := &KeyFile{}
	if err := f.add(now.UTC().Truncate(time.Millisecond), rand); err != nil {
		return nil, err
	}
	return f, nil
}

// KeyFileFromPrivateKey returns a key file whose only key is priv, a
// 64-byte Ed25519 private key, valid at every time.
func KeyFileFromPrivateKey(priv ed25519.PrivateKey) (*KeyFile, error) {
	if len(priv) != ed25519.PrivateKeySize {
		return nil, fmt.Errorf("receipt: Ed25519 private key must be %d bytes, got %d", ed25519.PrivateKeySize, len(priv))
	}
	pub := Ed25519Key(priv.Public().(ed25519.PublicKey))
	return &KeyFile{Keys: []FileKey{{Issuer: pub.Issuer(), PrivateKey: hex.EncodeToString(priv.Seed())}}}, nil
}

// add appends a new current key valid from notBefore.
func (f *KeyFile) add(notBefore time.Time, r io.Reader) error {
	if r == nil {
		r = rand.Reader
	}
	pub, priv, err := ed25519.GenerateKey(r)
	if err != nil {
		return fmt.Errorf("receipt: failed to generate a key: %w", err)
	}
	f.Keys = append(f.Keys, FileKey{
		Issuer:     Ed25519Key(pub).Issuer(),
		PrivateKey: hex.EncodeToString(priv.Seed()),
		NotBefore:  notBefore,
	})
	return nil
}

// Rotate retires the current key at now, dropping its private half, and
// adds a new current key; now must be after the current key's
// not_before. A receipt's timestamp is its signing instant cut to the
// millisecond, so the windows meet at now's millisecond: the retired key's
// not_after is now rounded up to the millisecond and the new key's
// not_before is now cut to it, so that every receipt either key signed,
// before or after now, lies in its key's window.
func (f *KeyFile) Rotate(now time.Time, rand io.Reader) error {
	if err := f.validate(); err != nil {
		return err
	}
	now = now.UTC()
	cur := &f.Keys[len(f.Keys)-1]
	if !now.After(cur.NotBefore) {
		return fmt.Errorf("receipt: cannot rotate at %s: the current key is valid from %s", now.Format(time.RFC3339Nano), cur.NotBefore.Format(time.RFC3339Nano))
	}
	notAfter := now.Truncate(time.Millisecond)
	if notAfter.Before(now) {
		notAfter = notAfter.Add(time.Millisecond)
	}
	old := *cur
	cur.NotAfter = &notAfter
	cur.PrivateKey = ""
	if err := f.add(now.Truncate(time.Millisecond), rand); err != nil {
		*cur = old
		return err
	}
	return nil
}

// Signer returns the signer of the current key. It fails for a trust file,
// which holds no private key.
func (f *KeyFile) Signer() (*Ed25519Signer, error) {
	if err := f.validate(); err != nil {
		return nil, err
	}
	cur := f.Keys[len(f.Keys)-1]
	if cur.PrivateKey == "" {
		return nil, errors.New("receipt: the key file holds no private key for its current key; it can verify but not sign")
	}
	seed, _ := hex.DecodeString(cur.PrivateKey) // validate checked it
	return NewEd25519Signer(ed25519.NewKeyFromSeed(seed))
}

// Trusted returns every key of the file as a [TrustedKey] with its window,
// ready for [Verify] or [NewVerifier].
func (f *KeyFile) Trusted() ([]PublicKey, error) {
	if err := f.validate(); err != nil {
		return nil, err
	}
	keys := make([]PublicKey, len(f.Keys))
	for i, k := range f.Keys {
		pub, _ := ParseEd25519Key(k.Issuer) // validate checked it
		tk := TrustedKey{PublicKey: pub, NotBefore: k.NotBefore}
		if k.NotAfter != nil {
			tk.NotAfter = *k.NotAfter
		}
		keys[i] = tk
	}
	return keys, nil
}

// Public returns a copy of f without private keys: the trust file to give
// verifiers.
func (f *KeyFile) Public() *KeyFile {
	p := &KeyFile{Keys: slices.Clone(f.Keys)}
	for i := range p.Keys {
		p.Keys[i].PrivateKey = ""
	}
	return p
}

// Marshal returns f as indented JSON, ending in a newline.
func (f *KeyFile) Marshal() []byte {
	b, _ := json.MarshalIndent(f, "", "  ") // strings and times always encode
	return append(b, '\n')
}

// validate checks the rules of the format described at [KeyFile].
func (f *KeyFile) validate() error {
	if len(f.Keys) == 0 {
		return errors.New("receipt: key file: keys is empty")
	}
	seen := make(map[string]bool, len(f.Keys))
	for i, k := range f.Keys {
		field := fmt.Sprintf("keys[%d]", i)
		pub, err := ParseEd25519Key(k.Issuer)
		if err != nil || k.Issuer != pub.Issuer() {
			return fmt.Errorf(`receipt: key file: %s.issuer must be "ed25519:" and 43 characters of base64url`, field)
		}
		if err := pub.check(); err != nil {
			return fmt.Errorf("receipt: key file: %s.issuer: %s", field, strings.TrimPrefix(err.Error(), "receipt: "))
		}
		if seen[k.Issuer] {
			return fmt.Errorf("receipt: key file: %s.issuer repeats an earlier key", field)
		}
		seen[k.Issuer] = true
		last := i == len(f.Keys)-1
		switch {
		case k.NotAfter == nil && !last:
			return fmt.Errorf("receipt: key file: %s.not_after is missing; only the last key is current", field)
		case k.NotAfter != nil && last:
			return fmt.Errorf("receipt: key file: %s.not_after is set; the last key is the current one", field)
		case k.NotAfter != nil && !k.NotAfter.After(k.NotBefore):
			return fmt.Errorf("receipt: key file: %s.not_after must be after not_before", field)
		case k.PrivateKey != "" && !last:
			return fmt.Errorf("receipt: key file: %s.private_key is set on a retired key; keep only its public half", field)
		}
		if k.PrivateKey != "" {
			seed, err := hex.DecodeString(k.PrivateKey)
			if err != nil || len(seed) != ed25519.SeedSize {
				return fmt.Errorf("receipt: key file: %s.private_key must be 64 hex digits", field)
			}
			if got := Ed25519Key(ed25519.NewKeyFromSeed(seed).Public().(ed25519.PublicKey)).Issuer(); got != k.Issuer {
				return fmt.Errorf("receipt: key file: %s.private_key does not match its issuer", field)
			}
		}
	}
	return nil
}

// ParseKeyFile reads a key file: the JSON described at [KeyFile], or, for
// a single key valid at every time, 64 hex digits of an Ed25519 seed or a
// PEM "PRIVATE KEY" block (PKCS #8, as written by
// openssl genpkey -algorithm ed25519). A member named twice in one
// object is an error, and so are two names that differ only in case
// ("not_after" and "Not_After"), which encoding/json reads as one field.
// Errors name the failing field.
func ParseKeyFile(data []byte) (*KeyFile, error) {
	trimmed := bytes.TrimSpace(data)
	switch {
	case bytes.HasPrefix(trimmed, []byte("{")):
		// encoding/json keeps the last of a repeated member name, so that
		// a file merged by hand could lose keys, or change one, in silence.
		if err := jsontext.NewDecoder(bytes.NewReader(trimmed)).SkipValue(); errors.Is(err, jsontext.ErrDuplicateName) {
			return nil, fmt.Errorf("receipt: key file repeats a member: %w", err)
		}
		dec := json.NewDecoder(bytes.NewReader(trimmed))
		dec.DisallowUnknownFields()
		var f KeyFile
		if err := dec.Decode(&f); err != nil {
			return nil, fmt.Errorf("receipt: key file is not valid JSON of the key file format: %w", err)
		}
		if len(bytes.TrimSpace(trimmed[dec.InputOffset():])) > 0 { // More reads a stray '}' as the end
			return nil, errors.New("receipt: key file holds more than one JSON value")
		}
		// It also matches names regardless of case: "not_after" and
		// "Not_After" in one key are one field, and the last would win.
		if err := jsonbody.Check(trimmed, &f); err != nil {
			var p *problem.Details
			if errors.As(err, &p) && len(p.Errors) > 0 {
				return nil, fmt.Errorf("receipt: key file: %s: %s", p.Errors[0].Field, p.Errors[0].Message)
			}
			return nil, fmt.Errorf("receipt: key file: %w", err)
		}
		if err := f.validate(); err != nil {
			return nil, err
		}
		return &f, nil
	case bytes.HasPrefix(trimmed, []byte("-----BEGIN")):
		block, rest := pem.Decode(trimmed)
		if block == nil || block.Type != "PRIVATE KEY" {
			return nil, errors.New(`receipt: key file: PEM input holds no "PRIVATE KEY" block`)
		}
		if len(bytes.TrimSpace(rest)) > 0 { // a second key would be dropped in silence
			return nil, errors.New("receipt: key file holds more than one PEM block, or text after it: give one key, or the JSON key file format for several")
		}
		k, err := x509.ParsePKCS8PrivateKey(block.Bytes)
		if err != nil {
			return nil, fmt.Errorf("receipt: key file: %w", err)
		}
		priv, ok := k.(ed25519.PrivateKey)
		if !ok {
			return nil, fmt.Errorf("receipt: key file: a %T key, want Ed25519", k)
		}
		return KeyFileFromPrivateKey(priv)
	}
	seed, err := hex.DecodeString(string(trimmed))
	if err != nil || len(seed) != ed25519.SeedSize {
		return nil, errors.New("receipt: key file: want the JSON key file format, 64 hex digits (an Ed25519 seed) or a PEM PRIVATE KEY block")
	}
	return KeyFileFromPrivateKey(ed25519.NewKeyFromSeed(seed))
}

// ReadKeyFile reads and parses the key file at path (see [ParseKeyFile]).
func ReadKeyFile(path string) (*KeyFile, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("receipt: failed to read key file: %w", err)
	}
	f, err := ParseKeyFile(data)
	if err != nil {
		return nil, fmt.Errorf("%w (in %s)", err, path)
	}
	return f, nil
}

// TrustedKey is a trusted key with the window in which it signed: a
// receipt verifies under it only if its decision.timestamp is at or after
// NotBefore and before NotAfter. A zero bound is open.
type TrustedKey struct {
	PublicKey
	NotBefore time.Time
	NotAfter  time.Time
}

// validAt reports whether t lies in k's window.
func (k TrustedKey) validAt(t time.Time) bool {
	return (k.NotBefore.IsZero() || !t.Before(k.NotBefore)) && (k.NotAfter.IsZero() || t.Before(k.NotAfter))
}

// window describes k's window for a message.
func (k TrustedKey) window() string {
	from, to := "the beginning", "now"
	if !k.NotBefore.IsZero() {
		from = k.NotBefore.UTC().Format(time.RFC3339Nano)
	}
	if !k.NotAfter.IsZero() {
		to = k.NotAfter.UTC().Format(time.RFC3339Nano)
	}
	return from + " to " + to
}
