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
// # What the threshold can and cannot tell, and the guard
//
// An embedding measures closeness of meaning, and two sentences that
// differ in one fact are close in meaning. On the real all-MiniLM-L6-v2,
// "Tokyo has a larger population than Delhi" and "Delhi has a larger
// population than Tokyo" are 0.987 similar, an invoice of 1,250 and one
// of 1,520 euros 0.979, "Yes, the contract allows termination" and "No,
// the contract does not allow termination" 0.975; on 50 paraphrases and
// 49 answers that change one fact, no threshold separates the two (at
// 0.97, 18 paraphrases and 10 changed facts agree; at 0.9, 42 and 29).
//
// Grouping therefore passes every pair through a lexical guard first: two
// answers can agree only if they state the same numbers in the same order
// (number words read as digits), the same polarity (a negation in one and
// none in the other differ), the same names in the same order, the words
// they share in the same order (so that roles cannot swap), and the same
// words of each kind whose words exclude one another (open and closed,
// minute and hour, kilometre and mile). A pair the guard rejects has
// similarity 0 in the grouping's evidence, whose Method says so. With the
// guard and [DefaultThreshold] (0.9), 0 of the 49 changed facts and 9 of
// the 50 paraphrases agree (docs/LOCAL-MODELS.md). The guard is English
// and lexical: it keeps apart many answers that say the same, and a
// changed fact it has no rule for (one word for another of a kind it
// does not list) is left to the threshold. Config.DisableGuard turns it
// off. Where paraphrases must agree and a changed fact must never pass,
// delegate and validate instead (the trust service's delegation.agreement
// "judged"), which asks the panel itself.
//
// # Calls, errors and secrets
//
// Each Group is one POST with every distinct answer as input, bounded by
// Timeout; connection failures, 429 and 5xx (except 501) are retried with
// exponential backoff, as router/chatworker's calls are. A non-2xx answer
// is a [*StatusError] with the endpoint's message; a reply that is not an
// embeddings list (a number beyond float64's range included) wraps
// [ErrMalformedReply]; vectors that do not match the inputs (another
// count, an index out of range or repeated, dimensions that differ, a zero
// vector) wrap [ErrBadVectors]. Vectors of any scale are compared by
// direction alone. The API key and the extra headers appear in no log or
// error, and [Grouper.String] shows only the model and the host.
package embedkey
