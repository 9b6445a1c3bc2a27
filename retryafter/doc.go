// Package retryafter reads what a server advised about its rate limits:
// the wait before a retry, in every common dialect, and the limits, what
// remains of them and when they reset; it names the dialect. It is the one
// reader of that advice: the client records it, the admission library
// acts on it, tests check both against it. The embedded simulator writes
// these fields on its own and must never import this package, or the two
// would agree on a bug.
//
// FromResponse reads it all from a response's status, header and (bounded)
// body; FromHeader reads the retry-after fields alone.
//
// # Precedence of the advised wait
//
// The first of these that gives a usable wait wins; Wait.Source names it
// (a results.Wait* constant):
//
//  1. retry-after-ms, a non-negative number of ms, decimals allowed
//     (retry-after-ms);
//  2. x-ms-retry-after-ms, the same, as other Azure services send it; the
//     Azure SDK for Go (azcore) reads retry-after-ms, then this, then
//     retry-after (x-ms-retry-after-ms);
//  3. retry-after as delay-seconds × 1000, decimals allowed: gateways send
//     them (retry-after-seconds);
//  4. retry-after as an HTTP-date, against the response's Date header when
//     it parses, else the local clock; a date passed advises 0 ms
//     (retry-after-date). An HTTP-date is GMT in each of RFC 9110's three
//     forms (§5.6.7): IMF-fixdate and RFC 850 dates must say GMT, asctime
//     dates are UTC; a date in another zone is no HTTP-date, whatever the
//     host's zone (as Date, too);
//  5. Gemini's retryDelay, in the error body of a response with status 400
//     or more (gemini-retry-delay);
//  6. only for a 429 or 503 that carries none of the above, not even an
//     unusable one: the reset of an exhausted limit, the longest if
//     several are: the IETF RateLimit t of a policy with r=0
//     (ietf-reset); RateLimit-Reset, or the draft-7 reset key, when the
//     remaining is 0 (ratelimit-reset); X-RateLimit-Reset when
//     X-RateLimit-Remaining is 0 (x-ratelimit-reset);
//     x-ratelimit-reset-requests/-tokens when its remaining is 0
//     (openai-reset); anthropic-ratelimit-*-reset when its remaining is 0
//     (anthropic-reset). An exhausted limit that states no reset advises
//     nothing; one whose reset cannot be read leaves the wait invalid
//     unless another exhausted limit's can.
//
// When none gives a usable wait, the source is "invalid" if any of 1 to 5
// (or, for step 6, an exhausted limit's reset) was present but unusable,
// else "none"; both carry results.None. Whatever the unit and the source,
// a wait over results.MaxWaitMS (10¹² ms) is unusable. A field repeated
// with different values is a list, not a number nor a date: unusable.
// Numbers are plain decimals: no sign, exponent, "inf" or "nan". Garbage never becomes a wait, and nothing panics (a fuzz test
// holds FromResponse to that).
//
// # Dialects
//
// Advice.Dialect (a results.Dialect* constant) is the dialect of the
// source that gave the wait when only one dialect has it (the resets,
// Gemini's retryDelay); otherwise the first of these whose fields are
// present: anthropic, azure, openai, ietf, ietf-legacy, x-ratelimit,
// gemini, rfc9110 (a bare retry-after), none. The limits
// (Remaining*, Limit*, Reset*MS) come from the first dialect that states
// them, in the order openai, anthropic, ietf, ietf-legacy, x-ratelimit;
// absent or unreadable, they are results.None.
//
//   - azure, Azure OpenAI and other Azure services: retry-after-ms,
//     x-ms-retry-after-ms and retry-after, with
//     x-ratelimit-remaining-requests/-tokens; recognized by retry-after-ms,
//     azure-openai-* (azure-openai-deployment-utilization), x-ms-* (region,
//     deployment, spillover) or apim-request-id, of which only the presence
//     is read but for x-ms-retry-after-ms and a provisioned deployment's
//     azure-openai-deployment-utilization (Advice.UtilizationPct, "NN.N%"
//     or a plain number; the client reads spillover itself).
//     https://learn.microsoft.com/en-us/azure/ai-services/openai/how-to/provisioned-get-started
//     https://learn.microsoft.com/en-us/azure/ai-services/openai/quotas-limits
//     https://github.com/Azure/azure-sdk-for-go/blob/main/sdk/azcore/internal/shared/shared.go
//   - openai: x-ratelimit-limit-, -remaining- and -reset-requests/-tokens;
//     a reset is a duration as OpenAI writes it ("12ms", "1s", "6m0s",
//     "1m30.5s", "2h3m"), read strictly: units h, m, s in that order, or
//     ms alone; a fraction only on the last, of s or ms; no sign, space,
//     exponent or bare number.
//     https://platform.openai.com/docs/guides/rate-limits#rate-limits-in-headers
//   - anthropic: retry-after (seconds) and
//     anthropic-ratelimit-{requests,tokens,input-tokens,output-tokens}-{limit,remaining,reset},
//     a reset an RFC 3339 time, measured against the response's Date, else
//     the local clock. The tokens-* fields are the token limit (Anthropic:
//     the most restrictive in effect); input- and output-tokens count when
//     exhausted.
//     https://docs.anthropic.com/en/api/rate-limits#response-headers
//   - ietf: the current draft's RateLimit and RateLimit-Policy, Lists of
//     Structured Field Values (RFC 8941, parsed by its algorithm and held
//     to every RFC 8941 case of the IETF test suite, Byte Sequences
//     base64-decoded; a malformed field is ignored whole, as the draft
//     requires). RateLimit
//     items name a policy, r its remaining quota (required), t the seconds
//     until it resets; RateLimit-Policy items give q, the quota, qu, its
//     unit (requests by default; "tokens" makes it the token limit), w, the
//     window. Several items are read; the most restrictive is reported.
//     The cost is linear in the fields' length, however many items,
//     keys and policies they hold (BenchmarkFromResponseRateLimit).
//     https://datatracker.ietf.org/doc/draft-ietf-httpapi-ratelimit-headers/11/
//     https://www.rfc-editor.org/rfc/rfc8941
//   - ietf-legacy: draft 7's RateLimit Dictionary (limit=100, remaining=0,
//     reset=30) and its Integer RateLimit-Policy items, and the separate
//     RateLimit-Limit, RateLimit-Remaining, RateLimit-Reset of drafts 00 to
//     06. https://datatracker.ietf.org/doc/html/draft-ietf-httpapi-ratelimit-headers-07
//     https://datatracker.ietf.org/doc/html/draft-ietf-httpapi-ratelimit-headers-06
//   - x-ratelimit: X-RateLimit-Limit, -Remaining, -Reset, as GitHub and many
//     gateways send them.
//     https://docs.github.com/en/rest/using-the-rest-api/rate-limits-for-the-rest-api
//   - gemini, Google Gemini and Vertex AI: no field; the 429 body's
//     error.details[] holds a google.rpc.RetryInfo whose retryDelay is a
//     protobuf Duration in JSON (decimal seconds and "s": "30s", "1.5s"),
//     decoded with encoding/json from at most MaxBody bytes.
//     https://ai.google.dev/gemini-api/docs/rate-limits
//     https://github.com/googleapis/googleapis/blob/master/google/rpc/error_details.proto
//     https://protobuf.dev/programming-guides/json/
//   - rfc9110: retry-after alone, delay-seconds or an HTTP-date.
//     https://www.rfc-editor.org/rfc/rfc9110#section-10.2.3
//
// RateLimit-Reset and X-RateLimit-Reset are delta seconds in the drafts,
// but servers send epoch seconds (GitHub, GitLab) or epoch milliseconds
// too. The size tells them apart: a value from 10¹² is epoch ms, from 10⁹
// epoch seconds (10⁹ s is 31.7 years as a delay, and 2001 as a date), a
// smaller one delta seconds; an epoch time is measured against the
// response's Date header (whole seconds), else the local clock, and one
// passed advises 0 ms. The rule presumes a clock past September 2001:
// under testing/synctest, whose clock starts in 2000, an epoch reset near
// "now" is below 10⁹ and reads as a delay of some 30 years (under the
// cap), so tests there send delta seconds.
//
// # Secrets
//
// FromResponse reads the values of the fields named above and of Date,
// and nothing else of a header: of any other field it reads at most
// whether it is present. A caller that must vet values first (ptuprobe's
// client checks them for echoed secrets) vets those.
//
// It imports results (the wait sources, the dialects and the cap) and
// internal/httpfield (how a field value is read, and the names of the
// fields read, which the client vets), nothing else.
package retryafter
