// Package client builds one request, sends it, and turns the response into
// the fields of a results.Record: status, timings, the advised wait parsed
// from retry-after-ms / retry-after, rate-limit headers and token usage.
//
// It is a library that other packages use, not a command: cmd turns flags
// into a Spec, Resolve turns the Spec into a Config (the API chosen, the key
// read from the environment through an injectable getenv, an "@path" body
// loaded from a regular file of at most MaxBodyFileBytes, headers split),
// and New turns the Config into a Target. dispatch reaches a Target only
// through its Sender interface, which internal/campaign adapts to
// Target.SendHead (a request's Head: the run's shared row and the first
// attempt's plan fields), so that neither package imports the other.
//
// A setting it refuses is a *valid.Error naming the Go field of Spec or
// Config (Endpoint, URL, PromptTokens, Headers, APIKeyEnv, …), in words that
// know nothing of flags; cmd renders field names as flag names.
//
// # APIs
//
// Every chat API gets the same synthetic request: a text of exactly
// PromptTokens tokens under o200k_base and cl100k_base (words of three
// letters, each one token with its space, CharsPerToken characters a
// token), unique per request from its first token of its own, after a
// shared prefix of SharedPrefixTokens when asked for, and an output cap
// of MaxTokens; Shapes varies the two per request (distributions, a
// trace's rows, whose shared blocks lead the text), and Prompts sends a
// user's own requests instead (ReadPrompts). Every attempt sent records
// PromptTokensSent, the text's count and the chat format's overhead
// (ChatOverhead). What differs is its framing, where the key goes and
// where the usage is:
//
//   - azure: POST {Endpoint}/openai/deployments/{Deployment}/chat/completions?api-version=…,
//     key in api-key (AZURE_OPENAI_API_KEY), or an Entra token as Bearer
//     (AZURE_OPENAI_AD_TOKEN); the body and usage are openai's.
//   - openai: POST {URL}, key as Bearer (OPENAI_API_KEY);
//     {"model","messages":[system?, user],"max_tokens"|"max_completion_tokens",
//     "stream","stream_options":{"include_usage":true}}; usage.prompt_tokens,
//     usage.completion_tokens, usage.prompt_tokens_details.cached_tokens.
//   - anthropic, the Messages API: POST {URL} (the full URL,
//     https://api.anthropic.com/v1/messages for Anthropic's own service),
//     key in x-api-key (ANTHROPIC_API_KEY), anthropic-version:
//     DefaultAnthropicVersion or Config.AnthropicVersion;
//     {"model","max_tokens","system":[{"type":"text","text","cache_control":{"type":"ephemeral"}}],
//     "messages":[{"role":"user","content"}],"stream":true}. The prefix is
//     marked for caching because the API caches nothing unmarked. Usage:
//     prompt_tokens = usage.input_tokens + cache_creation_input_tokens +
//     cache_read_input_tokens (input_tokens counts only what follows the
//     last cache breakpoint; the documented total is the sum),
//     cached_tokens = cache_read_input_tokens, completion_tokens =
//     output_tokens. A stream gives them in its message_start event
//     (message.usage) and, cumulative, in its message_delta events, the
//     last of which wins field by field.
//   - gemini, the Gemini API: POST {URL}/v1beta/models/{Model}:generateContent,
//     or :streamGenerateContent?alt=sse with Stream ({URL} is the base,
//     https://generativelanguage.googleapis.com for Google's own service);
//     key in x-goog-api-key (GEMINI_API_KEY), never in the URL: a URL
//     that carries key= (or access_token=) is refused;
//     {"systemInstruction":{"parts":[{"text"}]},"contents":[{"role":"user","parts":[{"text"}]}],
//     "generationConfig":{"maxOutputTokens"}}. Usage from usageMetadata
//     (a stream's last): prompt_tokens = promptTokenCount, which holds
//     the cached part; cached_tokens = cachedContentTokenCount;
//     completion_tokens = candidatesTokenCount + thoughtsTokenCount (a
//     thinking model's thoughts are output, as OpenAI's reasoning tokens
//     are in completion_tokens). A count of 0 is left out of the JSON by
//     the API, so in a block with a prompt count an absent one is 0.
//   - responses, OpenAI's Responses API: POST {URL} (the full URL,
//     …/v1/responses), key as Bearer (OPENAI_API_KEY); or, with Endpoint,
//     Azure OpenAI's v1 route POST {Endpoint}/openai/v1/responses, no
//     api-version, the key as azure's, the deployment in the model member;
//     {"model","instructions"?,"input","max_output_tokens","stream"?}, the
//     shared prefix as instructions. Usage from the response object's
//     usage, or a stream's response.completed (response.incomplete when
//     max_output_tokens cut it) event: prompt_tokens = input_tokens,
//     cached_tokens = input_tokens_details.cached_tokens, completion_tokens
//     = output_tokens (reasoning included).
//   - raw: any method, body and headers; usage read as openai's.
//
// anthropic and gemini have no default URL, like openai: a load generator
// does not send paid traffic to a service by default.
//
// The shapes follow the providers' documentation:
//   - https://platform.claude.com/docs/en/api/messages (request, usage, "Total input tokens … is the summation")
//   - https://platform.claude.com/docs/en/build-with-claude/streaming (event flow, cumulative message_delta usage)
//   - https://platform.claude.com/docs/en/build-with-claude/prompt-caching (cache_control, usage fields)
//   - https://platform.claude.com/docs/en/api/versioning (anthropic-version)
//   - https://ai.google.dev/api (x-goog-api-key on every request)
//   - https://ai.google.dev/api/generate-content (generateContent, streamGenerateContent,
//     systemInstruction, generationConfig.maxOutputTokens, UsageMetadata)
//   - https://ai.google.dev/gemini-api/docs/caching (implicit caching)
//   - https://platform.openai.com/docs/api-reference/responses (request, response object, usage,
//     streaming events); learn.microsoft.com/azure/ai-foundry/openai/api-version-lifecycle (the v1 route)
//
// # What a target says
//
// Nothing a target sends may take unbounded memory or time, or stop a run:
// response headers are read up to MaxHeaderBytes (beyond it the attempt is
// error "headers"), a body up to MaxBodyBytes (beyond it, error "body") of
// which only the last 64 KiB are kept, for the usage block, and
// Config.Timeout bounds the whole attempt, body included. A failure on
// this machine (out of descriptors or ports) is error "local" (Classify).
//
// ttfb_ms is the time from the send to the response headers, for every
// answer, streamed or not (a change from earlier releases, where a
// streamed answer's was its first data event). A streamed answer
// (Config.Stream, status 2xx) is also timed token by token, each from the
// send: ttft_ms, its first content event; itl_p50_ms and itl_max_ms, the
// median and largest gap between its content events; tpot_ms, (latency −
// ttft) / (output tokens − 1), the output tokens from the usage, or the
// content events when they are more. An event is timed by the read that
// completed it. Each dialect's stream reader says which events are
// content (content.go): a non-empty delta.content, a tool call, a
// non-empty refusal or reasoning text (azure, openai, raw); a
// content_block_delta (anthropic); a response.output_text.delta, or a
// refusal's, function call arguments' or reasoning text's delta
// (responses); a candidate part with text or a function call (gemini).
// Never a keep-alive comment, a role-only chunk, Azure's prompt-filter
// chunk, message_start or response.created. The timing of an open stream
// is fixed-size whatever its length (streamTiming: its first 24 gaps
// kept in 72 bytes, past them a 1.5 KB histogram of the gaps; the median
// within 0.5 ms below 512 ms either way).
//
// The advised wait is read by package retryafter, with its precedence. A retry header
// that the response repeats with different values is ambiguous: it is
// recorded as the list (joined by ", ", as HTTP combines a repeated
// field) and counts as unusable, as a value that is not a number would,
// so retry-after is read when retry-after-ms is ambiguous, and the source
// is "invalid" when no usable header is left. Identical repeats are one
// value.
//
// It decides nothing about when requests are sent (that is the shape and
// dispatch packages) and imports only results, retryafter, admission and
// internal packages. It never
// writes a secret anywhere: a key, an auth header, the endpoint host, a
// deployment name, the value of a header it was given, a request id or
// prompt text go neither into a Record nor into an error, and it writes no
// logs. Redirects are recorded, never followed, so the key never travels to
// another host.
//
// A target may echo a secret back. Every response header value the client
// reads is first checked, whole and before it is cut to
// results.MaxHeaderLen, against the key, the values of Config.Headers and
// the query values of the URL: a value holding one, whole, or any 12
// bytes of a secret of 12 bytes or more (a partial echo), is recorded as
// Redacted, "[redacted]", and so advises no wait. Values shorter than 8
// bytes are not taken for secrets: no key is that short, and "1" would
// match ordinary waits.
//
// # On the wire
//
// A plain http:// target reached directly (no proxy from the environment)
// is spoken to by the client's own HTTP/1.1 round tripper (h1.go): each
// round trip writes the request and reads the answer on the connection
// in the caller's goroutine, with the standard library's writer and
// parser ((*http.Request).Write, http.ReadResponse), over a keep-alive
// pool of MaxConns idle connections reused newest first, each closed
// once it has been idle 90 s (one timer for the pool). net/http's
// Transport passed each request to a goroutine of the connection's and
// the answer back from another, some four goroutine wake-ups a request;
// here one (bench/README.md, round 14: 10-21% less CPU a request by
// turns, a third less memory an open stream). It keeps the Transport's
// promises: a connection is reused only after its
// answer was read to its end with neither side asking to close; a body
// closed early, or the attempt's context ending, closes it; headers over
// MaxHeaderBytes fail in net/http's words. A connection the server closed
// while it was idle is found at its next use, and that request is sent
// once more on a new connection (nothing of its answer came; its body is
// rebuilt). An https:// target, or one through a proxy, goes through
// net/http's Transport (HTTP/2 where the server offers it, through the
// dial gate), unless Config.HTTP1 (`--http1`) asks for HTTP/1.1 alone
// over TLS, what the Python and Node SDKs speak: then through the same
// round tripper, each connection's TLS offering http/1.1 only.
//
// # Under a retry owner
//
// The client uses it for ptuprobe's own retries: with an `Owner`, its
// requests go through an `admission.Transport`, each attempt the owner
// reports is a row (`policy`, `decision`, `fallback` columns), and
// `--timeout` bounds each attempt, not the request. Every planned request
// is a row, whatever ends it: an attempt the owner gives up on before
// sending it (its pace's slot or the shared cooldown does not fit the
// budget) is a row of decision `give-up-local`, one a stop ends while it
// waits (a retry's wait, a hold) a row of decision `interrupted`, both
// status 0 without `sent_ms` (`results.Record.NotSent`); analyze counts them
// among the planned requests (the rows of attempt 1), never as HTTP
// attempts. A stop cancels a request at once while none of its attempts is
// on the wire (the transport below the owner marks when one goes), so a
// held request is not sent after Ctrl-C; an attempt on the wire keeps its
// grace. The cap on the time spent sending (`--max-duration`,
// `dispatch.Options.MaxDuration`) is the stop's deadline
// (`dispatch.Request.Run`): no attempt goes at or past it, retries
// included; one planned past it is given up as it is decided, a row of
// decision `give-up-local`, error `timeout`.
package client
