package receipt

import (
	"context"
	"crypto/ed25519"
	"encoding/base64"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"golang.org/x/mod/sumdb/note"
	"golang.org/x/mod/sumdb/tlog"
)

// The transparency log.
//
// Every receipt a logging store keeps ([MemStore], boltstore.Store,
// pgstore's receipt store) is also a leaf of an append-only Merkle tree,
// appended in the same transaction as the receipt itself, so that no
// receipt exists outside the log. The tree is RFC 9162's (and RFC
// 6962's): a leaf hashes as SHA-256(0x00 ‖ leaf), an interior node as
// SHA-256(0x01 ‖ left ‖ right); the leaf is the receipt exactly as issued
// and fetched, its RFC 8785 canonical JSON with the signature. The hashing,
// storage layout and proofs are golang.org/x/mod/sumdb/tlog's, the code of
// Go's checksum database: a store keeps the stored hashes of
// tlog.StoredHashes by their tlog.StoredHashIndex, and nothing else.
//
// A [Log] signs checkpoints of the tree in the C2SP tlog-checkpoint format
// as a C2SP signed note (golang.org/x/mod/sumdb/note) with the Ed25519 key
// that signs the receipts, and proves inclusion and consistency. Anyone
// holding the public key checks them offline with [OpenCheckpoint],
// [CheckInclusion] and [CheckConsistency].

// LogReader reads the log a store keeps beside its receipts. A store that
// implements it appends every receipt it Puts to the log in the same
// transaction, and Get returns the receipt's leaf index in
// Record.LogIndex. Implementations must be safe for concurrent use.
type LogReader interface {
	// LogSize returns the number of leaves in the log.
	LogSize(ctx context.Context) (int64, error)
	// ReadLogHashes returns the stored hashes at indexes (numbered as
	// tlog.StoredHashIndex), in order. Every index below
	// tlog.StoredHashCount(size) for a size LogSize returned exists.
	ReadLogHashes(ctx context.Context, indexes []int64) ([]tlog.Hash, error)
}

// LogAppend computes what a store writes to append leaf as leaf n of a
// log whose stored hashes read reads: the stored hashes to write at
// indexes first, first+1, and so on. Stores call it inside the transaction
// that puts the receipt, with n the log's size in that transaction.
func LogAppend(n int64, leaf []byte, read func(indexes []int64) ([]tlog.Hash, error)) (first int64, hashes []tlog.Hash, err error) {
	hashes, err = tlog.StoredHashes(n, leaf, tlog.HashReaderFunc(read))
	if err != nil {
		return 0, nil, fmt.Errorf("receipt: failed to append to the log: %w", err)
	}
	return tlog.StoredHashIndex(0, n), hashes, nil
}

// Checkpoint is the body of a C2SP tlog-checkpoint: the log's origin,
// its size and the root hash of the tree of that size.
type Checkpoint struct {
	Origin string
	Size   int64
	Hash   tlog.Hash
}

// maxLogSize is the largest tree size a checkpoint may state: proofs
// against a larger tree are never checked, as tlog's proof checks do not
// end for a tree of more than 2^62 leaves, which no log holds.
const maxLogSize = 1 << 62

// String returns the checkpoint body: the origin, the decimal size and
// the base64 root hash, each on its own line ending in a newline.
func (c Checkpoint) String() string {
	return c.Origin + "\n" + strconv.FormatInt(c.Size, 10) + "\n" + base64.StdEncoding.EncodeToString(c.Hash[:]) + "\n"
}

// ParseCheckpoint reads a checkpoint body. Extension lines after the
// third are allowed and ignored, as C2SP tlog-checkpoint permits. A size
// beyond 2^62 leaves is refused.
func ParseCheckpoint(text string) (Checkpoint, error) {
	lines := strings.SplitAfter(text, "\n")
	if len(lines) < 4 || lines[len(lines)-1] != "" {
		return Checkpoint{}, errors.New("receipt: checkpoint: want an origin, a size and a root hash, each line ending in a newline")
	}
	origin := strings.TrimSuffix(lines[0], "\n")
	sizeText := strings.TrimSuffix(lines[1], "\n")
	hashText := strings.TrimSuffix(lines[2], "\n")
	if origin == "" {
		return Checkpoint{}, errors.New("receipt: checkpoint: the origin line is empty")
	}
	size, err := strconv.ParseInt(sizeText, 10, 64)
	if err != nil || size < 0 || strconv.FormatInt(size, 10) != sizeText {
		return Checkpoint{}, fmt.Errorf("receipt: checkpoint: size %q is not a decimal count", truncate(sizeText, 40))
	}
	if size > maxLogSize {
		return Checkpoint{}, fmt.Errorf("receipt: checkpoint: size %d is beyond 2^62 leaves", size)
	}
	// Go's base64 decoder skips carriage returns and newlines: a hash
	// line reads only as the one it writes back.
	h, err := base64.StdEncoding.Strict().DecodeString(hashText)
	if err != nil || len(h) != tlog.HashSize || base64.StdEncoding.EncodeToString(h) != hashText {
		return Checkpoint{}, fmt.Errorf("receipt: checkpoint: root hash %q is not %d bytes of base64", truncate(hashText, 60), tlog.HashSize)
	}
	return Checkpoint{Origin: origin, Size: size, Hash: tlog.Hash(h)}, nil
}

// LogVerifierKey returns the C2SP note verifier key of pub for the log
// named origin: "origin+<key hash>+<base64 of 0x01 and the key>". The
// origin must be UTF-8, not empty, without white space and without '+',
// as a note key's name is.
func LogVerifierKey(origin string, pub Ed25519Key) (string, error) {
	if err := pub.check(); err != nil {
		return "", err
	}
	if origin == "" || !utf8.ValidString(origin) || strings.ContainsFunc(origin, unicode.IsSpace) || strings.Contains(origin, "+") {
		return "", fmt.Errorf("receipt: log origin %q: want a UTF-8 name, not empty, without white space or '+', such as example.com/vouch/receipts", truncate(origin, 60))
	}
	vkey, err := note.NewEd25519VerifierKey(origin, ed25519.PublicKey(pub))
	if err != nil {
		return "", fmt.Errorf("receipt: log origin %q cannot name a note key: %w", truncate(origin, 60), err)
	}
	return vkey, nil
}

// checkNoteKey refuses the note verifier key vkey, which
// note.NewVerifier accepted, when it holds an Ed25519 key that
// [Ed25519Key] refuses to trust, such as one of small order.
func checkNoteKey(vkey string) error {
	// "name+hash+key": the name has no '+', the hash is hex, and the key is
	// base64 of the algorithm byte (1, Ed25519, the only one
	// note.NewVerifier accepts) and the key.
	fields := strings.SplitN(vkey, "+", 3)
	if len(fields) != 3 {
		return fmt.Errorf("receipt: %q is not name+hash+key", truncate(vkey, 80))
	}
	b, err := base64.StdEncoding.DecodeString(fields[2])
	if err != nil || len(b) != 1+ed25519.PublicKeySize {
		return fmt.Errorf("receipt: %q holds no Ed25519 key", truncate(vkey, 80))
	}
	return Ed25519Key(b[1:]).check()
}

// OpenCheckpoint checks the signed note text against the note verifier
// keys (as from [LogVerifierKey] or GET /api/v4/log) and returns its
// checkpoint. It fails unless one of the keys signed it, and unless the
// note's origin is the name of the key that signed; a key that
// [Ed25519Key] refuses to trust, such as one of small order, is an error.
func OpenCheckpoint(signed []byte, verifierKeys ...string) (Checkpoint, error) {
	verifiers := make([]note.Verifier, 0, len(verifierKeys))
	for i, k := range verifierKeys {
		if slices.Contains(verifierKeys[:i], k) {
			continue // one key given twice is one key, not an ambiguous pair
		}
		v, err := note.NewVerifier(k)
		if err == nil {
			err = checkNoteKey(k)
		}
		if err != nil {
			return Checkpoint{}, fmt.Errorf("receipt: log verifier key %q: %w", truncate(k, 80), err)
		}
		verifiers = append(verifiers, v)
	}
	n, err := note.Open(signed, note.VerifierList(verifiers...))
	if err != nil {
		return Checkpoint{}, fmt.Errorf("%w: %v", ErrCheckpoint, err)
	}
	cp, err := ParseCheckpoint(n.Text)
	if err != nil {
		return Checkpoint{}, fmt.Errorf("%w: %v", ErrCheckpoint, err)
	}
	for _, s := range n.Sigs {
		if s.Name == cp.Origin {
			return cp, nil
		}
	}
	return Checkpoint{}, fmt.Errorf("%w: signed by %q, not by a key of the log %q", ErrCheckpoint, n.Sigs[0].Name, cp.Origin)
}

// CheckInclusion checks that leaf (a receipt as issued) is leaf index of
// the tree of cp, by the RFC 9162 inclusion proof. A tree of more than
// 2^62 leaves proves nothing.
func CheckInclusion(leaf []byte, index int64, proof []tlog.Hash, cp Checkpoint) error {
	if cp.Size > maxLogSize {
		return fmt.Errorf("%w: a tree of size %d is beyond 2^62 leaves", ErrNotInLog, cp.Size)
	}
	if index < 0 || index >= cp.Size {
		return fmt.Errorf("%w: leaf %d is outside a tree of size %d", ErrNotInLog, index, cp.Size)
	}
	if err := tlog.CheckRecord(proof, cp.Size, cp.Hash, index, tlog.RecordHash(leaf)); err != nil {
		return fmt.Errorf("%w: %v", ErrNotInLog, err)
	}
	return nil
}

// CheckConsistency checks, by the RFC 9162 consistency proof, that the
// tree of newer extends the tree of older: the log only grew between the
// two checkpoints. A tree of more than 2^62 leaves proves nothing.
func CheckConsistency(older, newer Checkpoint, proof []tlog.Hash) error {
	switch {
	case older.Origin != newer.Origin:
		return fmt.Errorf("%w: checkpoints of two logs, %q and %q", ErrInconsistent, older.Origin, newer.Origin)
	case older.Size < 0 || newer.Size > maxLogSize:
		return fmt.Errorf("%w: tree sizes %d and %d, not 0 to 2^62", ErrInconsistent, older.Size, newer.Size)
	case older.Size > newer.Size:
		return fmt.Errorf("%w: the tree shrank from %d to %d", ErrInconsistent, older.Size, newer.Size)
	case older.Size == 0 && older.Hash != emptyTreeHash():
		return fmt.Errorf("%w: the root hash of the empty tree is not SHA-256 of nothing", ErrInconsistent)
	case older.Size == newer.Size:
		if older.Hash != newer.Hash || len(proof) != 0 {
			return fmt.Errorf("%w: two root hashes for size %d", ErrInconsistent, older.Size)
		}
		return nil
	case older.Size == 0:
		if len(proof) != 0 {
			return fmt.Errorf("%w: a proof from the empty tree must be empty", ErrInconsistent)
		}
		return nil
	}
	if err := tlog.CheckTree(proof, newer.Size, newer.Hash, older.Size, older.Hash); err != nil {
		return fmt.Errorf("%w: %v", ErrInconsistent, err)
	}
	return nil
}

// emptyTreeHash is the root hash of the tree of no records.
func emptyTreeHash() tlog.Hash {
	h, _ := tlog.TreeHash(0, nil)
	return h
}

// Log signs checkpoints of a store's log and proves inclusion and
// consistency. Build it with [NewLog]; it is safe for concurrent use.
type Log struct {
	origin string
	vkey   string
	signer note.Signer
	store  LogReader
}

// NewLog returns the Log of store, named origin (the first line of every
// checkpoint and the name of its note key, such as
// "example.com/vouch/receipts"), whose checkpoints signer signs. The
// origin is refused as [LogVerifierKey] refuses it.
func NewLog(origin string, signer *Ed25519Signer, store LogReader) (*Log, error) {
	if signer == nil || store == nil {
		return nil, errors.New("receipt: NewLog needs a signer and a store")
	}
	vkey, err := LogVerifierKey(origin, signer.pub)
	if err != nil {
		return nil, err
	}
	v, err := note.NewVerifier(vkey)
	if err != nil {
		return nil, fmt.Errorf("receipt: %w", err)
	}
	return &Log{origin: origin, vkey: vkey, store: store,
		signer: noteSigner{name: origin, hash: v.KeyHash(), priv: signer.priv}}, nil
}

// Origin returns the log's origin.
func (l *Log) Origin() string { return l.origin }

// VerifierKey returns the note verifier key of the log's checkpoints.
func (l *Log) VerifierKey() string { return l.vkey }

// Checkpoint returns the signed checkpoint of the log as it is now, as
// C2SP signed note text.
func (l *Log) Checkpoint(ctx context.Context) (Checkpoint, []byte, error) {
	size, err := l.store.LogSize(ctx)
	if err != nil {
		return Checkpoint{}, nil, fmt.Errorf("receipt: failed to read the log size: %w", err)
	}
	return l.checkpointAt(ctx, size)
}

func (l *Log) checkpointAt(ctx context.Context, size int64) (Checkpoint, []byte, error) {
	h, err := tlog.TreeHash(size, l.reader(ctx))
	if err != nil {
		return Checkpoint{}, nil, fmt.Errorf("receipt: failed to hash the log: %w", err)
	}
	cp := Checkpoint{Origin: l.origin, Size: size, Hash: h}
	signed, err := note.Sign(&note.Note{Text: cp.String()}, l.signer)
	if err != nil {
		return Checkpoint{}, nil, fmt.Errorf("receipt: failed to sign the checkpoint: %w", err)
	}
	return cp, signed, nil
}

// InclusionProof returns the proof that leaf index is in the log as it is
// now, and the signed checkpoint the proof leads to.
func (l *Log) InclusionProof(ctx context.Context, index int64) (tlog.RecordProof, Checkpoint, []byte, error) {
	size, err := l.store.LogSize(ctx)
	if err != nil {
		return nil, Checkpoint{}, nil, fmt.Errorf("receipt: failed to read the log size: %w", err)
	}
	if index < 0 || index >= size {
		return nil, Checkpoint{}, nil, fmt.Errorf("%w: leaf %d of a log of size %d", ErrNotInLog, index, size)
	}
	proof, err := tlog.ProveRecord(size, index, l.reader(ctx))
	if err != nil {
		return nil, Checkpoint{}, nil, fmt.Errorf("receipt: failed to prove inclusion: %w", err)
	}
	cp, signed, err := l.checkpointAt(ctx, size)
	return proof, cp, signed, err
}

// ConsistencyProof returns the proof that the tree of size second extends
// the tree of size first. It returns a *[RangeError] unless
// 0 <= first <= second <= the log's size.
func (l *Log) ConsistencyProof(ctx context.Context, first, second int64) (tlog.TreeProof, error) {
	size, err := l.store.LogSize(ctx)
	if err != nil {
		return nil, fmt.Errorf("receipt: failed to read the log size: %w", err)
	}
	switch {
	case first < 0:
		return nil, &RangeError{Field: "first", Message: "must not be negative"}
	case second > size:
		return nil, &RangeError{Field: "second", Message: fmt.Sprintf("must not exceed the log's size, %d", size)}
	case first > second:
		return nil, &RangeError{Field: "first", Message: "must not exceed second"}
	case first == 0 || first == second:
		return tlog.TreeProof{}, nil
	}
	proof, err := tlog.ProveTree(second, first, l.reader(ctx))
	if err != nil {
		return nil, fmt.Errorf("receipt: failed to prove consistency: %w", err)
	}
	return proof, nil
}

func (l *Log) reader(ctx context.Context) tlog.HashReader {
	return tlog.HashReaderFunc(func(indexes []int64) ([]tlog.Hash, error) {
		return l.store.ReadLogHashes(ctx, indexes)
	})
}

// RangeError is a proof request out of the log's range; Field names the
// query parameter.
type RangeError struct {
	// Field is the query parameter out of range, such as "first".
	Field string
	// Message says what the parameter must be.
	Message string
}

// Error returns "receipt: " followed by the field and the message.
func (e *RangeError) Error() string { return "receipt: " + e.Field + " " + e.Message }

// noteSigner signs checkpoints with the receipts' Ed25519 key under the
// log's name, as note.NewSigner would from the key's text form.
type noteSigner struct {
	name string
	hash uint32
	priv ed25519.PrivateKey
}

func (s noteSigner) Name() string                    { return s.name }
func (s noteSigner) KeyHash() uint32                 { return s.hash }
func (s noteSigner) Sign(msg []byte) ([]byte, error) { return ed25519.Sign(s.priv, msg), nil }

// memLog is the log of a MemStore: its stored hashes in order.
type memLog struct {
	hashes []tlog.Hash
	size   int64
}

// append adds leaf as the next leaf and returns its index. The caller
// holds the store's lock.
func (m *memLog) append(leaf []byte) (int64, error) {
	first, hashes, err := LogAppend(m.size, leaf, m.read)
	if err != nil {
		return 0, err
	}
	if first != int64(len(m.hashes)) {
		return 0, errors.New("receipt: the memory log is out of step")
	}
	m.hashes = append(m.hashes, hashes...)
	m.size++
	return m.size - 1, nil
}

func (m *memLog) read(indexes []int64) ([]tlog.Hash, error) {
	out := make([]tlog.Hash, len(indexes))
	for i, x := range indexes {
		if x < 0 || x >= int64(len(m.hashes)) {
			return nil, fmt.Errorf("receipt: stored hash %d is not in the log", x)
		}
		out[i] = m.hashes[x]
	}
	return out, nil
}
