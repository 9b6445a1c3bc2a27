// Package sim is the embedded simulator: an HTTP handler, served on
// loopback by `ptuprobe serve` and started in-process when burst,
// schedule, characterize or calibrate are given no target, that answers
// like an Azure OpenAI provisioned-throughput (PTU) deployment under its
// documented admission contract, or like a rate-limited API gateway. It
// is a model of the documented contract, not a claim about the service's
// exact formula.
//
// It may import only the standard library and ptuprobe's internal
// packages (jsonscan, sleep, valid). It never imports client, dispatch,
// burst, schedule, analyze or report, nor anything of the command line:
// it is the far side of the wire, and writes its headers itself.
// Config.Validate names refused settings by their Go field names; cmd
// names the flags. (Its tests alone play characterize's plans, through
// internal/charplan.)
//
// # Profile "ptu"
//
// Routes: POST /openai/deployments/{name}/chat/completions?api-version=…
// (no api-version: 400; unknown name: 404 DeploymentNotFound), and the
// OpenAI-compatible POST /v1/chat/completions and
// /openai/v1/chat/completions, where "model" names the deployment.
//
// Tokens: a prompt costs ceil(characters / 4) tokens over all message
// contents. A leading system message of at least 1,024 tokens seen in
// the last 5 minutes is reported as cached, in 128-token steps
// (usage.prompt_tokens_details.cached_tokens), and discounted.
//
// Utilization is a leaky bucket of weighted tokens:
//
//	drain D    = PTU × TokensPerPTU / 60          tokens per second
//	capacity C = D × BucketDepth                  the level that is 100%
//	estimate   = prompt − cached + OutputWeight × max_tokens
//	             (max_completion_tokens, else DefaultMaxTokens)
//	actual     = prompt − cached + OutputWeight × completion tokens
//
// On arrival, at or under 100% the request is admitted and its estimate
// added, whatever its size. Over 100% it is admitted only if the unspent
// burst allowance (BurstPct% of C) covers its whole estimate; that
// allowance is spent by such admissions and earned back linearly over
// BurstRefill. Otherwise the answer is an immediate 429 with
// retry-after-ms = ceil((level − C) / D) in ms (converted to wall time
// under TimeScale), retry-after = the same in whole seconds rounded up,
// and {"error":{"code":"429","message":"… Please retry after N
// seconds."}}. When the response completes the estimate is replaced by
// the actual cost. Completion length is drawn, seeded, uniformly between
// 30% and 100% of the budget; latency = TTFT + completion × TPOT.
//
// Why an allowance that is spent rather than a fixed higher threshold:
// with a fixed threshold every refusal sees the level within one
// request's cost of that threshold, so all advised waits lie within one
// request's drain time of each other and no long tail can appear. An
// allowance that a rested deployment spends on a burst lifts the level
// well over 100% once — the first refusals after it wait for all of it to
// drain — and afterwards refusals wait only for one request's overshoot.
// That is the short-median, long-tail shape operators see.
//
// # Defaults and why
//
// The client's default request is ~1,000 prompt tokens with max_tokens
// 100: estimate 1,300, actual 1,090–1,300 (mean ~1,195). DefaultConfig
// is 170 PTU × 2,500 tokens/PTU/min: D = 7,083 tokens/s, so one request
// drains in 184 ms and about 5.9 requests/s are sustainable
// (DrainTokensPerSecond() / 1,195). BucketDepth 1 s makes C = 7,083
// (about 5 requests); BurstPct 175 gives an allowance of 12,396 (9
// requests), i.e. 1.75 s of drain, earned back over 5 minutes. The
// allowance is charged estimates and not refunded; once a request does
// not fit, the remainder is forfeited until it refills.
//
// The characterize plan (internal/charplan, its one source: 4 waves × 40
// requests 2 s apart, then 3 s at 3/s and a 12 s ramp from 3 to 24
// requests/s):
//   - wave 1 meets an idle deployment: ~6 requests fill it to 100%, 9
//     more ride the allowance, the other ~25 are refused with ≈ 1.6–1.9 s
//     (the allowance plus one overshoot, drained at D): the long tail;
//   - 1.75 s later the level is back under 100%, so waves 2–4 each admit
//     what 2 s drained (~11) and refuse ~29 with one overshoot, 0–184 ms;
//   - the ramp passes 5.9 requests/s after ~2 s and is refused for the
//     rest of its course, each refusal waiting for what is left of the
//     last admitted request's overshoot: 0–184 ms, mostly tens of ms.
//
// Result (TestDefaultsMakeALongTail, 24 runs varying seed, prompt size
// and wave spread): ~130 burst and 84–90 scheduled 429s, p50 ≈ 40–140 ms,
// p99 ≈ 1.6–1.9 s (p99/p50 ≥ 10; the worst of 300 such runs was 13),
// last response at ~22.5 s. Keeping the long wait (allowance / D = 1.75 s)
// shorter than the 2 s wave gap matters: a longer one would refuse all of
// wave 2 with medium waits and move the median. The margins are modest:
// a plan with much fewer requests over the sustainable rate gives fewer
// than 50 scheduled 429s; scale it by DrainTokensPerSecond.
//
// Spillover (SpilloverDeployment) adds a standard deployment with
// StandardTPM estimated tokens (prompt − cached + max_tokens) per minute
// and StandardRPM requests per minute enforced over 1-second windows
// (RPM/60 per second). What the PTU deployment would refuse — all of it,
// or with SpilloverPerRequest only requests carrying
// x-ms-spillover-deployment — is served there, with
// x-ms-spillover-from-deployment and x-ms-deployment-name. When it is full
// too, the 429 carries retry-after-ms (the sooner of the two deployments'
// waits) and x-ratelimit-remaining-requests/-tokens.
//
// The standard deployment also answers by name, on either route: a client
// that redirects a refused request to it (a fallback) is served under its
// limits alone, whatever the PTU deployment's utilization, and its own
// 429 advises the wait to the end of its binding window, with
// x-ratelimit-remaining-* and without the PTU's utilization header. With
// SpilloverPerRequest nothing spills unasked, so the PTU deployment's
// refusals stay 429s for the client to redirect.
//
// # Profile "gateway"
//
// Keys and organizations each have two ceilings, requests per second and
// tokens per minute, on clock-aligned windows. A window counter moves to
// a new window only when a call arrives in it. A call is checked against
// its organization first, then its key; only if both have room in both
// windows is it charged to both (estimate = prompt + max_tokens). On
// completion the estimate is replaced by prompt + completion tokens on
// each token counter that is still on the minute it was charged to; a
// counter that a later call has moved on is left alone, and the two
// counters move independently, so a correction can land on one and not
// the other. Image generation (POST /v1/images/generations) reports no
// usage and keeps its estimate (1,000 tokens per image); token counting
// (POST /v1/messages/count_tokens) costs nothing. A stream is charged when
// it starts. Refusals are 429 {"type":"error","error":{"type":
// "rate_limit_error",…}}, never queued; retry-after (seconds to the end of
// the refusing window) only with GatewayRetryAfter.
//
// Keys come from api-key, x-api-key or Authorization: Bearer; a call
// without one is the anonymous key. A key's organization is a stable
// FNV-1a hash of the key modulo GatewayOrgs (default 1: every key shares
// one organization, the case where a quiet key is refused because of the
// others). Keys are kept only as hashes; stats name them key-0, key-1…
// in order of first sight. Nothing is logged.
//
// # The simulator as a witness
//
// The simulator is also a test double that tells whether a client honours
// the waits it advises. Per key and in total (Stats, GET /sim/stats, and
// the summary `ptuprobe serve` prints when it stops) it counts:
//   - early_returns: retries that arrived before the wait their refusal
//     advised had passed;
//   - retries_on_time: retries that arrived at or after it;
//   - sdk_retries: requests that declare themselves an SDK's own retry,
//     X-Stainless-Retry-Count a decimal integer > 0 (the OpenAI and
//     Anthropic SDKs set it on their retries; 0, a sign or garbage is not
//     counted).
//
// A retry is the same request coming back: the same key, the same body
// and the same deployment. Clients and SDKs resend the body they were
// refused, and ptuprobe's prompts are unique per request, so a 64-bit
// hash of the body identifies it. The deployment is part of it because
// an advised wait is about the deployment that gave it: the same body
// redirected at once to the standard deployment is a new request there,
// not an early return.
//
// Every refusal that advises a wait remembers (key, deployment, body) →
// the model time until which the client was told to wait: PTU 429s and
// full-spillover 429s (retry-after-ms), 429s of the standard deployment
// called by name, and gateway 429s with GatewayRetryAfter (retry-after,
// whole seconds). The deadline is the refusal's model time plus the
// header's own value converted back to model time (ms × TimeScale), so
// rounding the header up only ever makes an honouring client later: a
// client that waits exactly what the header says is on time, at any
// TimeScale. A microsecond of model time (witnessSlack) absorbs the
// scaled clock's floating point, which after days at a high TimeScale
// can put such a client tens of nanoseconds short. A retry is judged by
// when it arrived, before a slow fault's delay; judging forgets the
// refusal (one refusal, one comeback), and a retry refused again with a
// wait is remembered afresh. Gateway 429s without retry-after and
// injected faults advise nothing the model stands behind and are not
// remembered.
//
// The witness sees the requests the model decides on, the ones counted
// per key as admitted or refused; a request answered by an injected fault
// is not judged and leaves its refusal remembered. It never changes an
// answer. Its memory is bounded: the last MaxAdvisedWaits (65,536)
// refusals, in a ring; remembering one more forgets the oldest, and if
// that one was still unanswered it is counted in advised_waits_evicted
// (its retry will be judged neither early nor on time). Full, it holds
// about 6 MB. Keys and bodies are kept only as hashes.
//
// # Faults, stats, determinism
//
// FaultRate and Faults inject http-date, missing, garbage, 503, reset or
// slow answers into a seeded share of requests, on either profile: every
// request the model sees is first counted and draws its fault
// (Server.arrive). GET /sim/stats returns Stats as JSON. With the same
// Seed and the same arrival order, every answer is the same.
//
// Config.Clock injects the clock. Tests use a ManualClock, which moves
// only when told to (AwaitSleepers says when handlers are parked on it).
// The default is the runtime clock run TimeScale times faster; it waits
// through internal/sleep, so under testing/synctest it runs on the
// bubble's fake clock.
package sim
