// Package receipt is the receipt layer (version 4) of the trust service: a
// signed, stored record of one decision that can be fetched and checked
// later. docs/INTERFACE.md, section 10, describes the wire contract.
//
// # In one line
//
// A trust service signs receipts with trust.WithSigningKey(priv) or
// trust.WithSigningKeyFile(path) (a [KeyFile]); a request asks for one
// with Receipt: [Inline](); anyone holding the public key checks it with
// [Verify](data, key), or with a key file's [KeyFile.Trusted] keys when
// keys rotate.
//
// # The pieces
//
//   - [Request] is the caller's receipt block: delivery (none, inline,
//     detached), which optional members to include, ttl and visibility.
//   - [Environment] clamps ttl and visibility ([TestEnvironment],
//     [ProductionEnvironment]); a request beyond the limit is narrowed,
//     never refused, and the receipt records the effective values.
//   - [Issuer] builds a [Receipt] from what the trust layer knows
//     ([Params]), hashes the input and output ([Hash]), signs it with a
//     [Signer] ([Ed25519Signer]) and puts it in a [Store].
//   - [Verifier] checks a receipt against trusted keys ([PublicKey],
//     [Ed25519Key], [TrustedKey] with a validity window) and reports each
//     check in a [Result].
//   - [KeyFile] is the signing key file: the current key and the retired
//     ones with their windows, rotated by [KeyFile.Rotate].
//   - [Store] keeps receipts for their retention: [MemStore] in memory,
//     boltstore.Store on disk; receipttest.TestStore checks any
//     implementation. [Fetch] applies the visibility rules.
//   - [Handler] serves GET /api/v4/receipt/{receipt_id} and
//     POST /api/v4/verify_receipt, and with a [Log] the log's endpoints.
//   - The transparency log: every receipt a store that is a [LogReader]
//     keeps (MemStore, boltstore.Store, pgstore's ReceiptStore) is appended,
//     in the same transaction, to an
//     RFC 9162 Merkle tree (golang.org/x/mod/sumdb/tlog). A [Log] signs its
//     C2SP checkpoints with the receipts' key and proves inclusion and
//     consistency; [OpenCheckpoint], [CheckInclusion] and
//     [CheckConsistency] check them offline.
//
// This package imports no other public package of the module; the trust
// package fills [Params] from what really ran.
//
// # Canonical form, hashes and signatures
//
// Every byte that is hashed or signed is RFC 8785 (JCS) canonical JSON,
// produced by jsontext of github.com/go-json-experiment/json (held byte
// for byte to github.com/gowebpki/jcs by a differential test and fuzz
// target): members sorted, no white space, numbers in ECMAScript form. task_meta.input_hash and output_hash are
// "sha256:" and the lowercase hex SHA-256 of the canonical JSON of the
// value ([Hash]); a string input is hashed as its JSON string, quotes
// included.
//
// The signature scheme [SchemeEd25519], "ed25519-jcs", is pure Ed25519
// (RFC 8032) over the canonical JSON of the whole receipt with
// signing.signature set to "", written in unpadded base64url. The issuer,
// the scheme name and the null chain_anchor are inside the signed bytes.
// signing.issuer is "ed25519:" and the public key in unpadded base64url, a
// self-describing key id. A verifier computes the signed bytes from the
// receipt JSON it received, not from a decoded struct: the RFC 8785
// canonical form of that text, whatever its member order, white space or
// escapes, and it says whether the text was already that form (the bytes
// as issued). Integers are written as IEEE 754 doubles by RFC 8785, so
// the Issuer refuses a session id beyond 2^53, which would be rounded, and
// a verifier refuses a text holding a number that the canonical form would
// change (rule "number"), so no two texts that readers could decode to
// different numbers share a signature. Keep a receipt as the bytes
// received (json.RawMessage, a file) all the same: they are what an
// offline verifier compares byte for byte.
//
// # Decisions where the interface is silent
//
//   - receipt_id is "rcpt_" and 26 characters of lowercase base32 of 128
//     bits from crypto/rand ([NewID]): unguessable and unique per decision.
//   - decision.timestamp is RFC 3339 in UTC with milliseconds
//     ("2026-05-01T12:00:00.000Z"). A receipt expires at timestamp plus
//     ttl days, and is not served from that instant on.
//   - ttl is "<n>d" with n from 1 to 99999. When the request names none,
//     the environment's default applies: 7 days in test, 30 in
//     production. The maximum is 7 days in test and 90 in production.
//   - Visibility defaults to private. public, a future mode, is clamped to
//     shared in every environment: the nearest narrower mode, readable by
//     the owner and the counterparties named at issue.
//   - Nothing in a [Request] is dropped in silence ([Request.FieldErrors]):
//     a block whose mode asks for no receipt (absent or none) sets no
//     other member (rule "required" on mode); counterparties go with a
//     shared or public visibility only (rule "shared_only": a private
//     receipt, the default, is its owner's alone), each named once (rule
//     "unique"). Clamping is no drop: it is reported.
//   - The include flags map one to one onto the optional members:
//     consensus_snapshot, policy_snapshot, task_meta.input_hash,
//     task_meta.output_hash, and router_trace_refs onto the whole
//     cortensor_refs object (sessions, tasks, router_trace_ids). A member
//     not included is absent from the JSON, not empty. task_meta.type,
//     decision, ttl and visibility are always present.
//   - consensus_snapshot copies the router's v3 consensus block, including
//     its low_confidence flag when set and its failures member when the
//     router counted failed runs as negative evidence.
//   - An unsigned receipt has no signing member. chain_anchor is always
//     JSON null; a receipt with any other anchor fails the schema check.
//   - Lookup (the interface leaves it to the environment): the owner may fetch
//     a receipt, and when it is shared so may the counterparties named at
//     issue. Anyone else, an unknown id, and an expired receipt get the
//     same 404 problem; a request without a caller identity gets 401.
//     Expired receipts are never returned and are removed by
//     Store.DeleteExpired (see [Sweep]).
//   - The verify_receipt request and response bodies are documented at
//     [Handler]. A receipt that fails a check is answered 200 with the
//     failed check; only a malformed request body is an error.
package receipt
