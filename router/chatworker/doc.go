// Package chatworker runs router jobs on language models behind any OpenAI-
// compatible chat-completions endpoint. [Worker] is a [router.Worker] that
// sends each job to such an endpoint (OpenAI, vLLM, Ollama, llama.cpp's
// server, LM Studio, hosted gateways), and [LoadPanel] builds a panel of
// such workers, one per session, from a JSON or YAML file.
//
// # Jobs
//
// Each job is one call to POST {base_url}/chat/completions with a system
// and a user message rendered from a text/template prompt:
//
//   - validate (versions 1, 2 and 3, and the trust service's arbitration)
//     asks a judge for {"verdict", "confidence", "reasons"}, the verdict
//     being VALID, INVALID, RETRY or NEEDS_SPEC. The prompt holds the
//     claim (type, description, output), the rules or acceptance criteria,
//     the task's input, spec and dispute context (router.Job.TaskInput,
//     TaskSpec and DisputeContext), the context and the metadata.
//   - factcheck asks the same of a statement, with TRUE or FALSE.
//   - delegate sends the objective, the input and the context, and
//     returns the reply's text as Result.Output, a string without
//     surrounding white space, otherwise uninterpreted. A reply the
//     endpoint cut at max_tokens (finish_reason "length") holds a part of
//     the answer and is no answer: a [*ResponseError] wrapping
//     [ErrCutReply], which the engine records as ERROR.
//     Execution.Model and Execution.Tools are not used: the worker runs
//     its own model and offers the model no tools.
//
// The prompts are [DefaultValidatePrompt], [DefaultFactcheckPrompt] and
// [DefaultDelegatePrompt]; [Config] takes a replacement for each. Material
// from the caller sits between tags that the system message declares data,
// not instructions, which makes prompt injection harder but not
// impossible: that is what redundancy across models is for.
//
// # Answers: structured first, the verdict first, never guessed
//
// Validations and fact checks ask for structured output: response_format
// {"type": "json_schema", "json_schema": {"name", "schema", "strict":
// true}}, with the verdicts as an enum. The schema's properties go out in
// the order verdict, confidence, reasons, and the reasons are bounded (at
// most 3, of at most 200 bytes each): a grammar-constrained server
// (llama.cpp, vLLM's guided decoding, Ollama's format) writes properties
// in the order given, so a small model states its verdict before anything
// it could repeat until max_tokens. An endpoint that rejects the schema
// with 400 or 422, and accepts the same request without it, is remembered
// by the worker, which from then on reads the answer from the text (unless
// a structured call has already succeeded, in which case a 400 is just an
// error). Either way the answer is the first JSON object in the reply that
// has a "verdict" member, alone, in a code fence or amid prose, after a
// reasoning model's thoughts. These end at the first </think> tag, whether
// the reply or the chat template opened them with <think>; a reply that
// opens with the answer has none, and a reply cut inside them has no
// answer. Because thoughts and notes may quote the tag, a reply whose
// verdict depends on which </think>, if any, ends its thoughts is refused
// with [ErrBadAnswer], never read either way.
//
// A reply's text is its message content: a string, or, in the newer form
// some servers send, an array of parts, whose text parts
// ({"type": "text", "text": ...}) are joined in order as they are; other
// parts (images, audio, refusals) are not read.
//
// The verdict alone decides whether a reply is an answer. A reply without
// a complete verdict, a verdict outside the job's set, two verdicts that
// differ in one answer, a refusal (message.refusal), an empty choice list
// or empty content is a [*ResponseError] carrying the reply's text, cut to
// [RawLimit] bytes: the engine records that replica as ERROR, and no
// verdict is ever guessed. Such a reply that the endpoint cut at
// max_tokens says so in its error (finish_reason: length).
// Once a verdict is complete, what follows it cannot take its vote away:
// a confidence missing or outside [0, 1] leaves the result without one
// (confidences are not rescaled: 85 is not read as 0.85), reasons that
// are not a list of strings are dropped, and a reply cut at max_tokens or
// broken after the verdict keeps the members read before the cut. Each of
// these is written in the run's evidence ([Call].AnswerNotes). Verdicts
// are compared without regard to case.
//
// # Measured confidence beside stated confidence
//
// A validation or a fact check also asks for logprobs (logprobs true,
// top_logprobs 1), which llama.cpp's server, vLLM and OpenAI return, and
// the run's evidence records the probability the model put on the tokens
// of its verdict ([Call].VerdictProbability) beside the confidence it
// wrote (the run's confidence); calibration can learn which of the two
// tells more. An endpoint that rejects logprobs with 400 or 422 is asked
// again without them, and not asked for them again; one that answers
// without them records no probability. Config.DisableLogprobs turns them
// off.
//
// # Calls, retries and cancellation
//
// The job's context is the request's context: when early quorum decides a
// version 3 call, the engine cancels the context and the request in flight
// is cut, which stops the spending. Connection failures, 429 and 5xx
// (except 501) are retried with exponential backoff from RetryWaitMin to
// RetryWaitMax, or after the endpoint's Retry-After, on 5xx too. A pause
// longer than RetryWaitMax, or one that would end after the context's
// deadline, ends the retries at once with a [*StatusError] that carries
// the Retry-After, rather than sleeping into the deadline. Other statuses
// are not retried and are a *StatusError with the endpoint's message.
//
// # Evidence and secrets
//
// A result carries the model that answered (Result.Model), the prompt and
// completion tokens and their cost from the host's price table
// (Result.Usage, nil when the reply reports no usage), and one step whose output is the [Call]: model, endpoint
// host, latency, attempts, whether structured output and logprobs were
// used, the finish reason, the verdict's probability and the answer's
// notes. A reply that becomes no result cost its tokens all the same:
// Work returns its model and usage beside the [*ResponseError], and the
// engine records them as the ERROR run's usage. The API key and the extra headers appear in no log,
// result or error: the endpoint's error messages are scrubbed of them, and
// [Worker.String] shows only the model and the host.
//
// # Decisions
//
// The client is this package's own, on github.com/hashicorp/go-retryablehttp,
// rather than github.com/openai/openai-go. The worker needs one endpoint
// and a handful of fields of it, and an embeddable library should not make
// its importers compile a client generated for a whole provider API, plus
// the four tidwall JSON modules it requires, for that. go-retryablehttp is
// already required by vouch's router client, so the worker adds no module
// to an embedding program, and its retry policy is replaceable functions
// that this package adapts to the job's deadline. Our own wire types also
// let the worker read what OpenAI-compatible servers actually send (error
// bodies in three shapes, content or refusal as null, usage absent).
//
// Panel files are JSON (encoding/json) when named .json and YAML
// (gopkg.in/yaml.v3, already in vouch's go.mod) when named .yaml or .yml;
// both reject unknown fields. Keys never sit in the file: api_key_env names
// the environment variable that holds one.
//
// max_tokens is sent as max_tokens, the name every OpenAI-compatible server
// takes; OpenAI's reasoning models want max_completion_tokens and should be
// run with MaxTokens zero.
package chatworker
