// Package embedkey groups free-text answers by what they say, through an
// OpenAI-compatible embeddings endpoint. [Grouper] embeds a delegation's
// outputs (POST {base_url}/embeddings: OpenAI, vLLM, Ollama, llama.cpp's
// server, LM Studio, hosted gateways) and groups the answers whose cosine
// similarity reaches a threshold. The grouping's Key is a consensus key
// (consensus.Policy.Key), under which paraphrases of one answer agree; the
// trust service uses a Grouper through trust.WithGrouper.
//
// # Grouping
//
// Answers are grouped by sequential complete linkage
// (consensus.GroupBySimilarity): taken in replica order, each answer joins
// the first group every member of which it matches at the threshold, or
// else starts a group. Any two answers counted together are therefore at
// least Threshold similar, a later answer never moves an earlier one (an
// adaptive tally that grows run by run never recounts), and no chain of
// near neighbours can join two answers that differ, as single linkage
// would. The order is fixed by the replicas, so the same answers always
// group the same way. The grouping, with the threshold and every pair's
// similarity, is what a trust response records as evidence.grouping.
//
// An output that is a JSON string is embedded as its text, white space trimmed
// and folded; any other
// output as its canonical JSON (consensus.DefaultKey). Outputs with the same
// canonical JSON are one answer and are embedded once.
//
// # What the threshold can and cannot tell
//
// An embedding measures closeness of meaning, and two sentences that
// differ in one fact ("won the prize in 1903", "won the prize in 1911")
// are close in meaning: with general-purpose embedding models their cosine
// similarity is often above 0.9. [DefaultThreshold] is therefore high,
// and a host should measure its own model on answers that change one fact
// before lowering it (docs/ACCURACY.md shows how). Where a changed fact
// must never pass, delegate and validate instead (the trust service's
// delegation.agreement "judged"), which asks the panel itself.
//
// # Calls, errors and secrets
//
// Each Group is one POST with every distinct answer as input, bounded by
// Timeout; connection failures, 429 and 5xx (except 501) are retried with
// exponential backoff, as router/chatworker's calls are. A non-2xx answer
// is a [*StatusError] with the endpoint's message; a reply that is not an
// embeddings list wraps [ErrMalformedReply]; vectors that do not match the
// inputs (another count, an index out of range or repeated, dimensions
// that differ, a value that is not finite, a zero vector) wrap
// [ErrBadVectors]. The API key and the extra headers appear in no log or
// error, and [Grouper.String] shows only the model and the host.
package embedkey
