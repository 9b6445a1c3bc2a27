// Package sim is the embedded simulator: an HTTP handler, served on
// loopback by `ptuprobe serve` and started in-process when burst,
// schedule, characterize or calibrate are given no target, that answers
// like an Azure OpenAI provisioned-throughput (PTU) deployment under its
// documented admission contract, or like a rate-limited API gateway. It
// is a model of the documented contract, not a claim about the service's
// exact formula. It speaks the wire of one vendor at a time (Dialect:
// azure, openai, anthropic, ietf, gemini): the admission model is the
// same in each, only the paths and how a decision is written change.
//
// The admission model of each profile is one limiter (limiter.go: admit
// or refuse with the advised wait, complete, report), chosen once by New
// from Config.Profile; the rest of the package — routes, dialects, the
// witness, the answers — is the same whichever decides.
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
// Routes (azure and ietf dialects; the others under "Dialects"): POST
// /openai/deployments/{name}/chat/completions?api-version=… (no
// api-version: 400), and the OpenAI-compatible POST /v1/chat/completions
// and /openai/v1/chat/completions, where "model" names the deployment.
// Any name is the PTU deployment, except the standard deployment's (see
// Spillover): real clients name the model or deployment their code uses
// (gpt-4o, a customer's deployment), in every dialect. The name is
// neither kept nor echoed; a call that names none ("model" missing) is a
// 400. The Responses API is served too, POST /v1/responses,
// /openai/v1/responses and the preview /openai/responses?api-version=
// (where openai-node's AzureOpenAI sends it; in the openai dialect
// /v1/responses only): "input" (a
// string, or messages with role and content as chat's), "instructions"
// (the prompt's leading system text), "max_output_tokens", "stream"; the
// answer a response object, {"id","object":"response","created_at",
// "status":"completed"|"incomplete","model","output":[{"type":"message",
// "role":"assistant","content":[{"type":"output_text","text"}]}],"usage":
// {"input_tokens","input_tokens_details":{"cached_tokens"},
// "output_tokens","total_tokens"}}, or the events response.created,
// response.output_text.delta and response.completed (with the usage)
// (platform.openai.com/docs/api-reference/responses).
//
// Tokens: a prompt costs its tokens under Config.Tokens, the vocabulary
// the client counts in (wired in by the commands: --sim-tokenizer,
// o200k_base or cl100k_base; the simulator imports none), plus the chat
// format's overhead on the chat and Responses routes, 4 tokens a message
// and 3 for the reply (OpenAI's cookbook, "How to count tokens with
// tiktoken"), as Azure's usage counts it. Without one (nil, or Chars) it
// costs ceil(characters / 4) over all message contents and no overhead,
// the rule a client without a tokenizer can reproduce. The count is cheap
// on every path: a prompt's text is counted in chunks cut where the
// vocabularies cannot join two tokens (before a space between two
// letters), each remembered by its digest, so a shared system message or
// the synthetic filler every request takes a prefix of is counted once
// and a request's own lead alone (tokens.go); an in-process caller (the
// policy lab, fit) gives its count with the request (WithPromptTokens)
// and the body is not counted at all. A leading system message of at least 1,024 tokens seen in
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
// 30% and 100% of the budget; its latency is the serving model's (see
// "Timing"): TTFT + completion × TPOT on an idle deployment.
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
// # Timing
//
// How long an admitted answer takes is a model of its own beside
// admission (serving.go), sized by the deployment's PTU:
//
//	size    S    = max(PTU, 15)
//	prefill R    = S × PrefillTokensPerPTU          prompt tokens/s (100 a PTU)
//	decode  Cd   = S × TokensPerPTU ÷ 60 ÷ OutputWeight   output tokens/s, all answers
//	full    N    = max(1, Cd × TPOT)                answers decoded at 1/TPOT each
//	backlog B    = prompt tokens admitted and not yet read, draining at R
//	TTFT(p)      = max(0, TTFT + (p − cached − 1,000) ÷ R) + B ÷ R
//	TPOT(n)      = TPOT × max(1, n ÷ N)             n answers in flight
//	whole answer = TTFT(p) + completion × TPOT(n at admission)
//	stream       = token k at TTFT(p) + (k − 1) × TPOT(n of the moment)
//
// TTFT (--sim-ttft) is thus the time to first token of a prompt of 1,000
// tokens (PrefillRefTokens, the client's default prompt) on an idle
// deployment, and TPOT (--sim-tpot) the time per token of a deployment
// far from saturation: both keep their meaning, and a deployment with
// nothing queued and no more than N answers in flight serves exactly
// them. A longer prompt waits (p − 1,000) ÷ R more for its first
// token, a shorter one less (never below 0; cached tokens are not read
// again), and a prompt admitted while others are still being read waits
// for them first: R is the deployment's, read one prompt after another
// (a fluid first-in first-out queue). Every answer in flight, being read
// or decoded, holds a share of the decode: n of them need n ÷ TPOT
// tokens a second, and past Cd each gets Cd ÷ n (at least one answer
// decodes at TPOT, however small the deployment). A whole (not streamed)
// answer's rate is fixed at its admission (one wait, so the policy
// lab's virtual clock has one event an answer); a stream reads it again
// at every chunk. A stream writes its headers and its first token at
// TTFT(p), then its tokens up to 16 a chunk, each chunk flushed when its
// last token is decoded.
//
// Sources and assumptions. PrefillTokensPerPTU = 100 (17,000 tokens/s at
// the default 170 PTU: a 4,000-token prompt read in 235 ms) is an
// assumption of the order public measurements of gpt-4o-class models'
// time to first token against prompt length show (tens of microseconds a
// prompt token), not a measurement of Azure's, scaled by the
// deployment's size. Cd takes the PTU's own exchange rate: a deployment
// sold for D weighted tokens a second, an output token weighing
// OutputWeight input tokens, produces D ÷ OutputWeight output tokens a
// second when output is all it does (2,361 at the defaults: N = 18.9
// answers at 8 ms a token). S is at least Azure's smallest provisioned
// deployment, 15 PTU (gpt-4o global and data zone, "Provisioned
// throughput minimums"): a smaller PTU shapes admission only (the
// referee's long-wait scenario drains a token a budget), not the
// accelerators serving what it admits. The standard deployment (spillover) is a shared
// pay-as-you-go pool that one caller does not load: its answers take
// TTFT(p) without the backlog, and TPOT. TTFT and TPOT both 0 is an
// instant deployment (the tests' and benchmarks'): no prefill, no
// queue, no decode share. TestTTFTGrowsWithThePrompt and
// TestTPOTRisesNearSaturation follow the arithmetic on the bubble's
// clock.
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
// requests/s; characterize raises the ramp's top where the later waves
// admit more than 9.6 requests a second, campaign.RampSizing, and grows
// a wave after one admitted whole, campaign.FirstContact, not here):
//   - wave 1 meets an idle deployment: ~6 requests fill it to 100%, 9
//     more ride the allowance, the other ~25 are refused with ≈ 1.6–1.9 s
//     (the allowance plus one overshoot, drained at D): the long tail;
//   - 1.75 s later the level is back under 100%, so waves 2–4 each admit
//     what 2 s drained (~11) and refuse ~29 with one overshoot, 0–184 ms;
//   - the ramp passes 5.9 requests/s after ~2 s and is refused for the
//     rest of its course, each refusal waiting for what is left of the
//     last admitted request's overshoot: 0–184 ms, mostly tens of ms;
//   - characterize then rests (--refill-rest, 20 s: charplan.RefillRest)
//     and sends its refill probe, requests of a quarter of the main
//     job's 6.25 ms apart (its first wave admitted ~15, at most 30)
//     until the first 429 comes back
//     (campaign.RefillProbe, group refill-probe, not played by this
//     package's tests): the bucket has drained, so ~25 fill it, then
//     they ride what of the allowance came back since the ramp's last
//     refusal forfeited it (allowance ÷ refill a second: 0.6 of a whole
//     request, two quarters, in 20 s at the 5-minute default); the
//     first refused over 100% is what fit reads the refill from.
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
// A neighbour (NeighbourEvery > 0, Config.Neighbour) is another tenant of
// the deployment: from NeighbourFirst after the simulator starts and every
// NeighbourEvery after that (model time), it submits a batch of work that
// the deployment takes whatever its utilization, NeighbourMin to
// NeighbourMax of drain (uniform, on a stream of its own seeded by Seed,
// so turning it on changes no completion length), added to the level at
// once. Every refusal until the batch has drained advises what is left of
// it, so the waits are bimodal, as a shared deployment's are: one call's
// overshoot most of the time, seconds after a batch — and the callers it
// refuses together are told one deadline. `ptuprobe referee`'s storm has
// one (batches of 5–17 s, every 30 s from 3 s): a client that ignores the
// advice and backs off a second or two comes back early.
//
// # Why the waits have an empty middle: the cold forecast
//
// The model so far cannot give the documents' waits (the 193 published
// events, analyze/testdata/upstream: 93% at most 60 ms, none between
// 60 ms and 5.19 s, 7% of 5.2–17.3 s) under the main job's plan, and
// the arithmetic says why. A refusal is told (level − C) ÷ D, the time
// until the gate reopens. The gate reopens for the same request at the
// same time whoever sends it, so a wait of seconds given to the first
// wave's tail means the gate is shut for seconds, and every later wave
// sent meanwhile (2 s apart) is refused with the rest of that wait:
// waits through the whole middle. Measured (characterize's plan on the
// model, TestDefaultsMakeALongTail's harness): the defaults give p50
// 93 ms, p99 1,752 ms and 20% of the waits between 100 ms and 4 s; of
// 3,024 settings (PTU 100–1,400, BucketDepth 0.25–10 s, BurstPct 0–2,800,
// BurstRefill 10 s–5 min, a neighbour of batches up to 17 s) one gives a
// median under 100 ms with a p99 over 5 s, and 12.8% of its waits lie
// between (counted by the profile's first, test-only fit; without the
// cold forecast's rows `ptuprobe fit` fits the documents poorly too, p90
// and p99 2,196 ms against 49 and 16,983: docs/fit.md).
//
// What gives an empty middle is advice that is not the gate: the wait a
// deployment forecasts. A deployment learns its throughput from the
// requests it completes; one that has completed none for ColdAfter (or
// none yet) is cold and forecasts at ColdDrainPct% of its drain, until
// its first answers are out (Cold, off while ColdDrainPct is 0):
//
//	forecast F = D                      a request completed in the last ColdAfter
//	             D × ColdDrainPct/100   none did (or none yet): cold
//	wait       = (level − C) ÷ F        refused; the gate and the drain stay D
//
// A wave that meets a rested deployment fills it to C, rides the burst
// allowance A over it, and its tail is told (A + one overshoot) ÷ F —
// seconds, with A = BurstPct% × C. Within one latency (TTFT + completion
// × TPOT) the wave's first answers are out, the deployment is warm, and
// every later refusal is told one overshoot ÷ D: tens of milliseconds.
// Nothing lies between; the long waits are over-cautious, as a forecast
// made without data is, and a client that comes back before one may
// well be admitted (the witness counts it early). The exhausted limit's
// reset says the same wait, in every dialect. TestColdForecastArithmetic
// follows it step by step.
//
// # Profile "documents"
//
// The `documents` profile (sim/profiles/documents.json; the default of
// `ptuprobe characterize`, whose --sim-profile ptu is the model above) is
// the PTU model fitted by `ptuprobe fit --plan characterize` to the
// burst-shaped row of the published events under the main job's own plan
// (scripts/documents-profile.sh; the method is docs/fit.md's: the PTU
// drain, bucket, burst allowance and refill and the cold forecast are
// rows of the fit's table, and the gateway and window models are tried
// too). The scheduled-shaped row (26 waits) is held out: reported, never
// fitted. The file's fit block has the figures: the burst-shaped waits at
// KS 0.022 (0.41 without the resolution: the model tells one wave one
// wait, where the documents' short waits spread over 32–51 ms), p50 42,
// p90 49, p99 16,753, max 16,753 ms against 43, 49, 16,983 and 17,258, 126
// waits against 167; one long mode at 17 s where the documents have two
// (5.2–7.1 s and 16.1–17.3 s). Its physical reading: a drain of 18,500
// tokens/s (PTU 444), a bucket of 29 ms and an allowance of 76 times it
// that a rested deployment's first wave spends, refilled over 11 min,
// its refusals told their lift at 13% of the drain; cold after 6.8 s.
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
// without one is the anonymous key. (In every profile, OnlyKey accepts one
// key alone: a request carrying another in any key header — api-key,
// x-api-key, x-goog-api-key, Authorization: Bearer — or none is answered
// 401 in the dialect's envelope, gemini 400 "API key not valid", as the
// services answer a wrong key, and counted in foreign_keys among the
// rejected. The referee sets its throwaway key there.) A key's organization is a stable
// FNV-1a hash of the key modulo GatewayOrgs (default 1: every key shares
// one organization, the case where a quiet key is refused because of the
// others). Keys are kept only as hashes; stats name them key-0, key-1…
// in order of first sight. Nothing is logged.
//
// # Profile "window"
//
// A fixed-window limiter, what express-rate-limit and most API gateways
// are: WindowLimit requests (default 50) per clock-aligned window of
// WindowSize (default 10 s), whatever they cost; the next request of a full
// window is refused with the time to the window's end (retry-after-ms, and
// retry-after rounded up to the second, in the dialect's fields), which is
// right for every client it refuses at once — unlike the PTU's leaky bucket,
// whose wait is when the next single request fits. Admitted requests are
// answered as the PTU profile answers them (latency, usage, the standard
// deployment by name). The limits each answer reports are the window's
// requests: its limit, what is left, and its reset.
//
// # What a refusal costs
//
// By default a refusal is free: it is instant and takes no capacity, so a
// client that retries without pause costs the deployment nothing but its
// own attempts. A real front end is not free: to know that a request would
// overrun the deployment it must estimate the request's cost, and a gateway
// that tokenizes the prompt to estimate it (Azure's PTU estimate is prompt
// tokens + max_tokens, counted before admission) spends that work on every
// request it then refuses. RefusalCost (--sim-refusal-cost, the profile key
// refusal-cost) charges it: each refusal takes RefusalCost, a fraction 0..1,
// of the refused request's capacity, in the one place a decision is made
// (limiter.go, admit):
//
//	ptu      the bucket's level rises by RefusalCost × the request's
//	         weighted estimate, and drains like any other work
//	window   every 1/RefusalCost refusals count one request in the window
//	gateway  RefusalCost × the estimate is charged to the tokens of the
//	         key and of its organization
//
// The default stays 0: no published source gives the cost of a refusal as a
// share of a request's, so the model does not assume one; the policy lab
// covers it instead (its grid runs 0, 1% and 5%). It matters: at 3x the
// deployment's capacity a persistent retrier's refusals, at 2%, take most
// of the capacity (TestRefusalCostPunishesPersistence: honor answers 1%
// where none answers 32% in `ptuprobe policies --load 3x
// --sim-refusal-cost 0.02`), which is why the lab's ranking of retry
// policies is conditional on it.
//
// # The simulator as a witness
//
// The simulator is also a test double that tells whether a client honours
// the waits it advises. Per key and in total (Stats, GET /sim/stats, and
// the summary `ptuprobe serve` prints when it stops) it counts (the ones
// from retries on in total only):
//   - early_returns: retries that arrived before the wait their refusal
//     advised had passed;
//   - retries_on_time: retries that arrived at or after it;
//   - sdk_retries: requests that declare themselves an SDK's own retry,
//     X-Stainless-Retry-Count a decimal integer > 0 (the OpenAI and
//     Anthropic SDKs set it on their retries; 0, a sign or garbage is not
//     counted);
//   - retries: every request recognized as a retry (a comeback, early or
//     on time, or a declared SDK retry), each once; marked_retries and
//     undeclared_retries split the comebacks (below); herd_compared and
//     herd_in_step the herd (below): the ones on time compared with
//     their key's median lateness, and those within HerdWindow (50 ms)
//     of it, waits honoured without jitter, which a fleet refused in one
//     wave honours together; over_budget the ones, early or on time, that
//     came back more than Config.WitnessBudget after their refusal (one
//     back past its budget and before its advice is early and over
//     budget); advised_waits_pending the
//     refusals no request has come back to (yet), and pending_past_budget
//     those of them older than the budget (a client asleep past it, or
//     one that gave the call up: nothing on the wire tells them apart);
//   - max_call_retries: the most retries of one call, in a row of its
//     refusals, that waited (came back more than QuickRetryWindow, 50 ms
//     wall, after their refusal), reported: a client's own retry count is
//     no second owner (LangChain JS retries 6 times, azure-core for
//     Python 10); mixed_calls: the calls whose retries interleave two
//     owners' schedules (stackedRetry): one back at once (early, within
//     QuickRetryWindow) after a retry of the call that waited, or an
//     early retry that waited less than half the longest early wait of
//     the call before it (a backoff starting over: an inner owner's
//     bursts between the outer owner's waits). One owner's waits follow
//     the advice, or a backoff that grows or stays, perhaps starting at
//     once (urllib3's 0 s, 1 s, 2 s); so two owners show even when a
//     gateway between them drops X-Stainless-Retry-Count.
//
// A retry is the same request coming back: the same key and deployment,
// and the same call. A call is recognized by a marker when the client
// sets one — a header set once per call and repeated on each of its
// retries: Idempotency-Key (the IETF draft-ietf-httpapi-idempotency-key-
// header field; the Stainless generator sends it when enabled, which the
// OpenAI and Anthropic SDKs leave off: openai-node declares
// idempotencyHeader and never sets it, src/client.ts buildHeaders;
// anthropic-sdk-python sets _idempotency_header = None), then
// x-ms-client-request-id (the Azure SDKs' request-id policy sets it once
// per operation, only when absent, ahead of the retry policy: azcore
// runtime/policy_request_id.go, @azure/core-rest-pipeline, azure-core for
// Python). A marked comeback is counted in marked_retries. Otherwise the
// body identifies the call: clients and SDKs resend the body they were
// refused, and ptuprobe's prompts are unique per request, so a 64-bit
// hash of it is the call. X-Stainless-Retry-Count numbers the attempts of
// one call (openai-node, openai-go, anthropic-sdk-go: 0, then 1, 2 on the
// SDK's retries, internal/requestconfig Execute) but not the calls, so it
// cannot tell two calls with one body apart; a comeback neither marked
// nor declared is undeclared (an application loop, a gateway, a retry
// owner beneath the SDK). Unmarked callers that send one body from
// several workers are the one case the witness cannot judge: one
// worker's first attempt reads as another's comeback
// (TestWitnessTellsMarkedCallsApart). The deployment is part of a
// request's identity because an advised wait is about the deployment
// that gave it: the same body redirected at once to the standard
// deployment is a new request there, not an early return.
//
// Every refusal that advises a wait remembers (key, deployment, call) →
// the model time until which the client was told to wait: PTU 429s and
// full-spillover 429s, 429s of the standard deployment called by name,
// and gateway 429s that advise a wait (in the azure dialect only with
// GatewayRetryAfter; in the others always, in their rate-limit fields).
// The deadline is the refusal's model time plus the shortest wait the
// refusal wrote — the very value of one of its fields (see "What the
// simulator advised") — converted back to model time (ms × TimeScale).
// Every field is the same model wait rounded up in its own unit, so
// rounding only ever makes an honouring client later: a client that waits
// exactly what any one field says is on time, at any TimeScale. A microsecond of model time (witnessSlack) absorbs the
// scaled clock's floating point, which after days at a high TimeScale
// can put such a client tens of nanoseconds short. A retry is judged by
// when it arrived, before a slow fault's delay; judging forgets the
// refusal (one refusal, one comeback), and a retry refused again with a
// wait is remembered afresh. Refusals that write no wait (the azure
// gateway without GatewayRetryAfter, azure with OmitRetryHeaders) and
// injected faults advise nothing the model stands behind and are not
// remembered.
//
// The herd is how tightly a client keeps to the deadlines it was told,
// net of its own latency. Beside the deadline, a refusal remembers the
// wait each of its fields wrote, as the client read it (retry-after-ms
// and retry-after in azure; the millisecond x-ratelimit-reset-* and
// retry-after's whole seconds in openai; the anthropic reset's whole
// second and retry-after). A retry on time is late against a field by
// its arrival less its refusal's time and that field's wait; the
// lateness of the last MaxHerdLateness (65,536) of them, field by
// field, is kept (512 KB full). herd_in_step counts, per key and field,
// the latenesses within HerdWindow (50 ms wall) of that key's median
// one, herd_compared every one but the median, for the field with the
// most in step (herd_source: the one the client honours). A client that
// sleeps exactly what a field says is late by its own overhead, the
// answer's way back and its event loop, about the same every time: all
// in step, whether it is Go's net/http or Node's event loop (openai-go
// and openai-node both read 1 in docs/referee.md), and every call it
// was told one deadline comes back together; read against the field it did not honour, or with jitter,
// the latenesses spread — uniform over J, 2 × 50 ms ÷ J of them stay in
// step (a tenth for a second). The median of all of them, rather than
// the previous retry, is the reference because retries told one
// deadline arrive in the order of their jitter: neighbours in time are
// neighbours in lateness, more so the more of them there are
// (TestHerdIsTheClientsJitter).
//
// The witness sees the requests the model decides on, the ones counted
// per key as admitted or refused; a request answered by an injected fault
// is not judged and leaves its refusal remembered. It never changes an
// answer. Its memory is bounded: the last MaxAdvisedWaits (65,536)
// refusals, in a ring; remembering one more forgets the oldest, and if
// that one was still unanswered it is counted in advised_waits_evicted
// (its retry will be judged neither early nor on time). Full, it holds
// about 9 MB, and the herd's record 512 KB more. Keys, markers and bodies
// are kept only as hashes.
//
// # Dialects
//
// Dialect decides the paths the simulator accepts, where it reads the
// key, the rate-limit fields it writes and its error bodies. Whatever the
// dialect, the profile's model decides (the PTU bucket, spillover, the
// standard deployment, the gateway's ceilings); a refusal's wait is the
// same model time, written as the dialect writes it. Sources are cited per
// dialect; where a service's behaviour is not documented, the choice made
// is said.
//
// A limit, in the dialects that report limits on every answer (openai,
// anthropic, ietf), is one of two kinds: requests or tokens. The PTU
// bucket is a token limit only — limit = capacity C (100%), remaining =
// the room under it (at least 1 while at or under 100%, since any request
// is then admitted; 0 over it) — and a PTU answer reports no request
// limit, since the PTU enforces none. The standard deployment reports its
// two windows (requests per second, RPM/60; tokens per minute); the
// gateway, of its organization's and key's windows, the tighter of each
// kind. Reset follows remaining: a limit with something left resets when
// it is back to its initial state (its window's end; the bucket empty), as
// OpenAI defines its reset; an exhausted limit (remaining 0) when it
// admits again (its window's end; the bucket back at 100%). The limit
// that refused a request is reported exhausted, even with a crumb left
// that does not fit it. So a refusal's exhausted limit resets after
// exactly the model's wait: its reset and its retry headers say the same
// wait. (Should another limit be exhausted too and reset later — a gateway
// caller out of both requests and tokens — the limit fields advise that
// later reset, since a retry before it is refused again, while retry-after
// keeps the refusing window's.) A 200's limits are as of its admission,
// before its latency.
//
// Every wait is converted to wall time (÷ TimeScale) and rounded up once
// to whole milliseconds; every coarser form is rounded up from that: whole
// seconds (⌈ms/1000⌉), or an absolute time (the wall clock at the decision
// plus the ms, rounded up to the second).
//
// azure (the default; Azure OpenAI): the routes above; the key in api-key,
// x-api-key or Authorization: Bearer. A refusal writes retry-after-ms
// (whole ms) and retry-after (whole seconds) and the Azure error body
// {"error":{"code":"429","message":"… Please retry after N seconds."}};
// the standard deployment's answers and the gateway's carry
// x-ratelimit-remaining-requests and -tokens; the gateway's 429s carry
// retry-after only with GatewayRetryAfter. Sources: "Get started using
// provisioned deployments" (learn.microsoft.com/azure/ai-services/openai/
// how-to/provisioned-get-started: a refused call's 429 with retry-after-ms
// and retry-after) and Azure OpenAI quotas (…/how-to/quota).
//
// openai (api.openai.com): POST /v1/chat/completions, "model" naming the
// deployment (any name: the PTU's); on the gateway also
// /v1/images/generations; the key in Authorization: Bearer. Every answer
// carries x-ratelimit-limit-, x-ratelimit-remaining- and
// x-ratelimit-reset- of requests and tokens (PTU: tokens only), the resets
// durations in whole milliseconds written as OpenAI writes them, Go's
// duration form: "12ms", "1s", "1.5s", "6m0s" (platform.openai.com/docs/
// guides/rate-limits, "Rate limits in headers": sample values 1s and 6m0s,
// "the time until the rate limit resets to its initial state"; responses
// seen in the wild: 547ms, 2m52.8s). A 429's body is {"error":{"message":
// "Rate limit reached on tokens …","type":"tokens"|"requests","param":
// null,"code":"rate_limit_exceeded"}}; its exhausted limit has remaining
// 0 and its reset is the wait, in ms. Retry headers: the guide documents
// none; OpenAI's OpenAPI work documents an optional retry-after in integer
// seconds on rate-limited 429s (openai/openai-openapi#564), and the SDKs
// read retry-after-ms, then retry-after. So a 429 carries retry-after
// (whole seconds) and no retry-after-ms; with OmitRetryHeaders none, and
// the reset of the exhausted limit is its only advice.
//
// anthropic (the Messages API): POST /v1/messages, with the
// anthropic-version header required (missing: 400, as the API says it
// must be sent; docs.anthropic.com/en/api/versioning), "model" naming the
// deployment, max_tokens required (missing: 400), "system", "messages",
// "stream"; on the gateway also /v1/messages/count_tokens; the key in
// x-api-key, or Authorization: Bearer (what @anthropic-ai/sdk sends when
// given an auth token rather than an API key). An answer has the
// Messages shape, {"id","type":"message","role":"assistant",
// "content":[{"type":"text","text"}],"model",
// "stop_reason","stop_sequence","usage":{"input_tokens",
// "cache_creation_input_tokens","cache_read_input_tokens",
// "output_tokens"}} (cached prompt tokens are cache_read_input_tokens and
// not input_tokens), or the events message_start, content_block_start,
// content_block_delta, content_block_stop, message_delta, message_stop.
// Every answer carries anthropic-ratelimit-{requests,tokens,input-tokens,
// output-tokens}-{limit,remaining,reset}, the resets RFC 3339 times in
// whole seconds (docs.anthropic.com/en/api/rate-limits, "Response
// headers"): tokens is the model's token limit, input-tokens the same,
// output-tokens the same divided by OutputWeight (what output alone could
// still spend; left out when it weighs nothing), so all three are
// exhausted together with one reset. A 429 carries retry-after (integer
// seconds, as the same page documents; not with OmitRetryHeaders) and
// {"type":"error","error":{"type":"rate_limit_error","message":…}}.
//
// ietf (draft-ietf-httpapi-ratelimit-headers-11, the structured-field
// form, datatracker.ietf.org/doc/draft-ietf-httpapi-ratelimit-headers): the
// azure routes and keys, as behind a gateway that writes the draft's
// fields. Every answer carries one policy, "default", for the limit that
// binds it (a 429's exhausted limit that resets last; else the one with
// the least left for its size): RateLimit-Policy: "default";q=LIMIT;w=
// WINDOW (seconds, rounded up, at least 1; qu="tokens" for a token
// limit — the draft registers only requests, content-bytes and
// concurrent-requests) and RateLimit: "default";r=REMAINING;t=RESET (whole
// seconds). A 429 has r=0 and t = the wait, and the draft's problem
// type quota-exceeded as application/problem+json with
// "violated-policies":["default"]. With IETFRetryAfter it also carries
// Retry-After (whole seconds; the draft's §7: it then takes precedence);
// with IETFLegacy it writes the older drafts' (-06 and before)
// RateLimit-Limit, RateLimit-Remaining and RateLimit-Reset (delay
// seconds) instead. Other errors keep the azure dialect's envelopes.
//
// gemini (the Gemini API, ai.google.dev/api): POST
// /v1beta/models/{model}:generateContent and :streamGenerateContent (also
// under /v1/), ?alt=sse for server-sent events, else a JSON array of
// chunks; {model} names the deployment (any name: the PTU's). The key
// goes in x-goog-api-key, which the reference says every request must
// carry; a key in the URL (?key=), which the service has long accepted
// as Google APIs do, is refused with 400 INVALID_ARGUMENT here, so a
// client that would write its key into URLs (and so into logs) fails its
// test. The request is {"contents":[{"role","parts":[{"text"}]}],
// "systemInstruction":{"parts":[…]},"generationConfig":{
// "maxOutputTokens"}}, the answer {"candidates":[{"content":{"parts":
// [{"text"}],"role":"model"},"finishReason":"STOP"|"MAX_TOKENS","index"}],
// "usageMetadata":{"promptTokenCount","candidatesTokenCount",
// "totalTokenCount","cachedContentTokenCount"},"modelVersion",
// "responseId"} (cachedContentTokenCount only when some are cached, as
// proto3 JSON omits zeros). No answer carries a rate-limit header and no
// 429 a retry header: a 429 is {"error":{"code":429,"message",
// "status":"RESOURCE_EXHAUSTED","details":[QuotaFailure,{"@type":
// "type.googleapis.com/google.rpc.RetryInfo","retryDelay":"1.500s"}]}},
// retryDelay a protobuf Duration in JSON at millisecond resolution,
// rounded up, written as proto3 writes it: whole seconds bare ("30s"),
// else three fraction digits. (Gemini's own 429s carry retryDelay values
// from "30s" to nine fraction digits; milliseconds are the unit the other
// dialects' finest field has.)
//
// Whatever the dialect, spillover (an Azure feature) keeps its
// x-ms-deployment-name and x-ms-spillover-from-deployment headers,
// UtilizationHeader its azure-openai-deployment-utilization, and faults
// their own misbehaviour, in the dialect's error envelope.
//
// # What the simulator advised
//
// Every refusal that writes a wait records what it wrote, one Advice per
// field (Server.Advised): the refusal's number, the key (key-n), the
// dialect, the source — the field: retry-after-ms, retry-after,
// x-ratelimit-reset-tokens or -requests (the exhausted limit's),
// anthropic-ratelimit-tokens-reset or -requests-reset, ratelimit (t),
// ratelimit-reset, retry-info (Gemini's retryDelay) — and the wait as
// written in wall milliseconds (a field in seconds as whole thousands; an
// absolute time minus the wall clock it was written against, which the
// Advice carries as At). Per dialect and the same refusal:
//
//	azure       retry-after-ms = ⌈wait⌉ ms, retry-after = ⌈ms/1000⌉ s
//	openai      x-ratelimit-reset-<exhausted> = ⌈wait⌉ ms, retry-after
//	anthropic   anthropic-ratelimit-<exhausted>-reset = ⌈now + wait⌉ s, retry-after
//	ietf        RateLimit t = ⌈wait⌉ s (legacy RateLimit-Reset), Retry-After if asked
//	gemini      retryDelay = ⌈wait⌉ ms
//
// so a test drives a client against the simulator and checks that the
// client recorded exactly these waits, source by source. The record is
// bounded like the witness: the last MaxAdvice (65,536) entries, about 3
// MB full, older ones forgotten and counted (advice_evicted). Stats and
// GET /sim/stats summarize every one per source: count, least, greatest
// and summed wall ms ("advised"), and the refusals that wrote them
// ("advised_refusals"). The witness's deadline is the smallest of a
// refusal's values. Faults record nothing.
//
// # Profiles
//
// A Profile is a named set of settings (profile.go): a versioned JSON file
// whose settings are keyed by the --sim-* flags' names without the prefix
// (ProfileKeys), each checked by Validate, with the Fit that `ptuprobe
// fit` judged them by (docs/fit.md). OpenProfile finds one by a limiter's
// name (ptu, gateway, window), an embedded name (profiles/NAME.json) or a
// path; the Config it returns carries ProfileSource and Fit, which change
// nothing of the model: the policy lab reads them to refuse a poor fit.
//
// # Faults, stats, determinism
//
// FaultRate and Faults inject http-date, missing, garbage, 503, reset or
// slow answers into a seeded share of requests, on either profile: every
// request the model sees is first counted and draws its fault
// (Server.arrive). GET /sim/stats returns Stats as JSON. With the same
// Seed and the same arrival order, every answer is the same.
//
// Config.Clock injects the clock. The package's tests use a manual one
// (manualclock_test.go), which moves only when told to and says when
// handlers are parked on it.
// The default is the runtime clock run TimeScale times faster; it waits
// through internal/sleep, so under testing/synctest it runs on the
// bubble's fake clock.
//
// # The model, its defaults and tests
//
// `sim/doc.go` is the full model: a leaky bucket of weighted tokens, estimate
// on arrival, actual cost on completion, and a burst allowance that a rested
// deployment spends (the source of the long tail). The defaults are tuned with
// the main job's plans (`internal/charplan`); `sim/plan_test.go` plays those
// plans on a virtual clock and guards the short-median, long-tail shape. The
// cold forecast (`sim/cold.go`: a deployment that has completed nothing for a
// while advises its waits at a share of its drain) gives the published waits'
// empty middle; the `documents` profile (`sim/profiles/documents.json`,
// characterize's default, `cmd/sim_flags.go`'s `defaultTo`) is the
// model fitted to them under the main job's plan by `ptuprobe fit`
// (`scripts/documents-profile.sh`). The
// `gateway` profile, spillover, faults and `/sim/stats` are described there.
// It speaks every vendor's dialect (`Config.Dialect`: azure, openai,
// anthropic, ietf, gemini — paths, keys, headers and 429 bodies), writing its
// headers on its own (it never imports `retryafter`: the two would agree on a
// bug), and records every wait it advised, field by field
// (`(*Server).Advised()`, summarized in `/sim/stats`), so tests compare what
// a client recorded with what was written. With no target, the client API the
// user chose picks the dialect. `--sim-*` flags on the traffic commands and on
// `ptuprobe serve` alike tune the embedded simulator
// (`cmd/sim_flags.go` is their one table; `ptuprobe help simulator` lists them). `sim.Serve` bounds what a client
// may hold, as a real server does: a request's headers within 10 s and the
// whole request within 30 s (`http.Server.ReadTimeout`, which net/http lifts
// once the body is read, so a long streamed answer is never cut; no
// WriteTimeout for the same reason), an idle connection 2 minutes; with
// `sim.MaxConnsPerClient` (serve's `--max-conns-per-client`, 1024 by
// default; the embedded simulator sets none) the listener counts the open
// connections per client IP and answers one more 503. `Config.TimeScale`
// is at most `sim.MaxTimeScale` (100): past it a wall millisecond is more of
// the model than it can spare.
//
// The simulator is also a witness of the client (`sim/witness.go`, "The
// simulator as a witness" in `sim/doc.go`): per key it counts retries that
// came back before the wait their refusal advised (`early_returns`), at or
// after it (`retries_on_time`), and requests that declare themselves SDK
// retries (`sdk_retries`, `X-Stainless-Retry-Count` > 0), in `Stats`,
// `/sim/stats` and the summary `ptuprobe serve` prints on stop; in total
// also every retry recognized, the marked and the undeclared comebacks,
// the herd (`sim/herd.go`: retries within 50 ms of their key's median
// lateness after the deadline of the field it honours: no jitter), those
// over a `WitnessBudget`, and the refusals nobody came back to. A retry is the same key, deployment and
// call (hashed): a call is its marker when the client sets one that it
// repeats across the retries of one call (`Idempotency-Key`,
// `x-ms-client-request-id`), else its body, so a redirect to the standard
// deployment is not an early return, and marked calls with one body are
// told apart; deadlines are kept in model time from
// the header's own value, so a client that waits exactly what the header
// says is on time at any `TimeScale`. Its memory is a ring of the last
// `sim.MaxAdvisedWaits` refusals (about 9 MB when full; the herd's
// record of the last `sim.MaxHerdLateness` latenesses, 512 KB). It parses no advice
// (and imports no `retryafter`): it remembers the very number it wrote, so
// it stays a count independent of the client's reading of it. The
// standard deployment (`SpilloverDeployment`) answers by name under its own
// limits, the fallback a client can redirect to.
package sim
