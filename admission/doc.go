// Package admission is a retry owner for rate-limited LLM endpoints (Azure
// OpenAI PTU deployments, OpenAI, gateways): an http.RoundTripper that reads
// a refusal (429, or a 503 that advises a wait) as an admission signal and
// decides, within a latency budget, whether to wait, go elsewhere or stop.
// Every decision is observable, one Decision per attempt.
//
// # The rule
//
// A rate-limited server says how long to wait, in one of several dialects
// (retry-after-ms, retry-after, Gemini's RetryInfo in the error body, or
// only the reset of the exhausted limit: OpenAI, Anthropic, the IETF
// RateLimit fields, X-RateLimit-*). Package retryafter, the one reader of
// that advice, reads it with one precedence (retryafter.FromResponse); for
// a refusal status (Policy.Statuses) the Transport reads the start of the
// body first, at most retryafter.MaxBody bytes, and keeps it for the
// caller. Decision.WaitSource names the source that won. The rule this
// package keeps:
//
//   - Exactly one retry owner. Retries stacked in two layers multiply: an
//     SDK that tries 3 times over a transport that tries 3 times sends 9
//     requests into a server that asked for fewer. Turn the SDK's retries
//     off (below); a request an SDK marks as its own retry is refused with
//     a *DoubleOwnerError unless Policy.AllowSDKRetries.
//   - Honour the advised wait, with jitter (below).
//   - Hold a latency budget (Policy.Budget, shortened by a context
//     deadline): sleep when the wait ends before the budget does; when it
//     does not (or it is over Policy.MaxWait), redirect to the fallback (a
//     spillover or standard deployment, Policy.Fallback) at once, once per
//     request; otherwise give up with a *GiveUpError, whose LastWait lets
//     a service shed load upstream with a retry-after of its own. After a
//     redirect, the fallback's refusals sleep or give up by the same rule;
//     there is never a second redirect.
//
// Only admission refusals are retried: a transport error (no response) is
// returned at once, and a 503 without a usable advised wait is an outage,
// returned as it is. Network failures belong to a layer that knows whether
// the request may be sent twice.
//
// # Jitter
//
// An advised wait W is slept as W × U[1, 1+Jitter] (DefaultJitter 0.2 is
// recommended; a Policy without Jitter sleeps W exactly).
// Never less than W: a retry sent before the advised time is refused again
// and spends quota (a rate limiter counts refused requests too). Up to 20%
// more: clients told the same wait, as a burst refused together is, return
// spread over a fifth of it instead of at one instant, where they would be
// refused together again. A Backoff (no usable advice, or IgnoreAdvice) is
// not stretched: it draws its own randomness; Exponential is full jitter,
// U[0, min(cap, base·2^(retry−1))), after AWS's "Exponential Backoff and
// Jitter".
//
// # A fleet told one wait
//
// Jitter spreads clients over a fifth of their wait, which is enough for a
// burst refused by a window (every client is told the window's end) and not
// for a leaky bucket, the PTU's model: there the advised wait is when the
// next single request fits, every refused client hears about the same one,
// and a fifth of 100 ms is 20 ms, so they come back together and all but one
// are refused again (the herd; ptuprobe policies measures it,
// docs/policies.md). Three settings answer it, each usable alone or
// together:
//   - Slots (NewSlots): refused clients of one fleet take distinct retry
//     times, the i-th at its advised wait + i × width;
//   - FloorAdvice: the longer of the advised wait and Backoff, the header as
//     a floor under full-jitter backoff;
//   - Pace (NewPace): each client learns the rate the deployment admits
//     and sends at it, giving up locally what cannot be sent within the
//     budget (AIMD; see Pace for what it borrows and why).
//
// All three, and the shared cooldown, keep their state in process: one
// Transport's cooldown, the Transports given one *Slots, one *Pace. A
// fleet of processes shares it through a Coordinator (Policy.Coordinator;
// admission/redisstate keeps it in Redis), each decision falling back to
// the in-process state when the Coordinator fails. A MemoryCoordinator
// (NewMemoryCoordinator) keeps it in one process, by the in-process
// state's own code, for Transports that share it there and for measuring
// what sharing costs: each call may cost a round trip (MemoryOptions.Delay,
// slept on a Clock) and fail (MemoryOptions.Fail). The Go code and
// redisstate's scripts take the same steps to the microsecond (their
// arithmetic is on whole microseconds); a test drives one long sequence
// through both and compares every answer.
//
// # The field's client policies
//
// The best-known client-side answers to overload are settings too, each
// after its source (docs/policies.md compares them on ptuprobe's
// simulator), each the state of one client (one Transport) and never
// shared through a Coordinator:
//   - Throttle (NewThrottle): the client-side adaptive throttling of
//     Google's SRE book ("Handling Overload"): reject attempts locally with
//     probability max(0, (requests − K·accepts)/(requests + 1)) over the
//     last two minutes, K = 2.
//   - RetryQuota (NewRetryQuota): a retry token bucket; with too few
//     tokens a refusal is not retried. StandardRetryQuota is the AWS SDKs'
//     standard mode (500 tokens, a retry after a throttle takes 5, a
//     success gives 1 back), ThrottlingRetryQuota gRPC's retry throttling
//     (proposal A6).
//   - MaxAboveBackoff with FloorAdvice: the advised wait honoured between
//     the backoff and a bound above it, as the AWS SDKs' 2026 retry
//     behaviour honours x-amz-retry-after (5 s above the backoff).
//   - Adaptive (NewAdaptive): the AWS SDKs' adaptive mode, a token bucket
//     before every attempt whose rate follows CUBIC from the throttles.
//   - Decorrelated (Policy.ChainedBackoff): decorrelated jitter, after
//     the AWS Architecture Blog's "Exponential Backoff and Jitter": each
//     wait drawn from [base, 3 × the previous one], at most a cap.
//   - PaceConfig.Utilization: a Pace that also reads the capacity the
//     target reports on every answer (azure-openai-deployment-utilization,
//     or the remaining limits), and so needs no refusal to start.
//
// Full jitter over the advised wait is Jitter 1: W × U[1, 2].
//
// # Your own algorithm, your own rule
//
// What a retry owner consults before it sends is a Gate: asked before
// each attempt to the primary target (send now, hold until a time, or
// refuse locally), before it sleeps towards a retry (allow it or not),
// and told every answer. Throttle, Adaptive and RetryQuota are Gates, and
// a Gate of your own goes in Policy.Gates (ExampleGate): a new algorithm
// is one type with three methods, and the Transport does the waiting, the
// budget, the redirect and the Decisions. The Pace and the shared
// cooldown are not Gates: their state is a fleet's, shared through a
// Coordinator.
//
// Policy.Rule is a rule of your own for each refusal the Policy would
// retry (ExampleRule): it sees the response (status, header, body start,
// the advised wait and the wait the Policy chose) and returns the wait,
// or no retry; the budget, MaxAttempts and the Gates still hold it. Where
// Backoff sees only the retry number, a Rule is go-retryablehttp's
// CheckRetry and Backoff in one.
//
// In ptuprobe, adding an algorithm to the policy lab and to --policy is
// this one file in admission and one line in internal/policy's list of
// built-ins, which names the Gate each client gets.
//
// # Example
//
// The recommended policy under an http.Client (Example in example_test.go
// runs it against a loopback server that refuses once; go test runs it,
// and pkgsite or go doc -http show it):
//
//	p := admission.DefaultPolicy()
//	p.Observe = func(d admission.Decision) { log.Println(d.Attempt, d.Status, d.Action, d.Reason) }
//	t, err := admission.New(nil, p)
//	if err != nil {
//		return err
//	}
//	client := &http.Client{Transport: t}
//	resp, err := client.Get(url) // a 429 is waited out and sent again
//
// # Defaults
//
// A Policy's zero numbers mean what they say: the zero Policy sends each
// request once (MaxAttempts 0 is one attempt, as 1 is), with no budget, no
// jitter and no MaxWait. DefaultPolicy returns the recommended settings: at
// most 3 attempts (DefaultMaxAttempts), a 30 s budget (DefaultBudget),
// jitter 0.2 (DefaultJitter). Only what would be unusable at zero takes a
// default in every Policy: Exponential(500ms, 8s) when there is no usable
// advice (Backoff nil), refusals 429 and 503-with-advice (Statuses empty),
// a body without GetBody buffered up to 1 MiB for replay (MaxReplayBody
// 0). No fallback, no shared cooldown, SDK retries refused. No setting
// takes a negative value.
//
// The Policy can also emulate other clients' handling of refusals, for
// comparison: the OpenAI and Anthropic Python and Node SDKs (MaxAttempts 3,
// MaxWait 60s with BackoffOverMaxWait, no jitter, no budget; they also
// retry 408, 409, other 5xx and connection errors, which this package
// does not), the current openai-go (the same without MaxWait: it honours
// any advised wait), fixed waits or polling (IgnoreAdvice with Constant),
// plain backoff (IgnoreAdvice with Exponential), "redirect"
// (RedirectFirst), "none" (MaxAttempts 1 with ReturnLastResponse: the
// refusal is returned as it is).
//
// # Turning SDK retries off
//
// With this Transport under an SDK's HTTP client, set the SDK's own retries
// to zero, so that this Transport is the only owner:
//
//   - openai-go: option.WithMaxRetries(0) ("When given 0, the client only
//     makes one request"; github.com/openai/openai-go, option/requestoption.go),
//     with option.WithHTTPClient(&http.Client{Transport: t}).
//   - OpenAI and Anthropic Python and Node SDKs: max_retries=0 /
//     maxRetries: 0 on the client or per request.
//   - Azure SDK for Go (azcore): policy.RetryOptions{MaxRetries: -1} ("A
//     value less than zero means one try and no retries"; 0 means the
//     default, 3); Azure SDK for Python (azure-core): retry_total=0.
//
// The OpenAI and Anthropic SDKs set X-Stainless-Retry-Count (SDKRetryHeader)
// on every attempt: 0 on the first, n on their n-th retry. A request that
// reaches this Transport with any value but a plain 0 proves a second owner
// (a value that is no plain number is a retry whose number is unknown).
// With Policy.MarkRetries, when a request carries the header, this
// Transport's own retries carry their retry number in it too.
//
// # Observing
//
// Policy.Observe gets one Decision per attempt, safe to log as it is (no
// URL, host, header value, key or body; Reason is numbers and fixed words,
// put together only when read: its String, or any fmt verb, as in the
// example above; an attempt whose Reason nobody reads costs no formatting).
// A caller that records each attempt itself (ptuprobe writes one row per
// attempt) uses WithAttemptObserver, whose Attempt adds the response's
// header and the attempt's times; that is not safe to log as it is. An
// attempt refused locally (the shared cooldown, the Pace, the Throttle,
// the Adaptive rate), or that the context ended before it was sent, is
// observed too, with Status 0 and an Err class; what the Pace, the
// Adaptive rate and the RetryQuota made of an answer is in its Reason.
//
// # Time
//
// Every wait is on the runtime clock and ends when the request's context
// does, so tests run this package inside testing/synctest bubbles, over
// internal/memnet, with exact timings. Policy.Clock replaces it: ptuprobe's
// policy lab runs Transports and its simulator on one virtual clock.
//
// # Imports
//
// It imports the standard library, retryafter (the advised wait), results
// (the Decision constants, the wait sources, the Class* error classes) and internal
// helpers (sleep, valid); never client, dispatch, sim or cmd: it is a
// library those may use, not a part of them. A refused Policy setting is a
// validation error naming the Policy field; from outside this module read
// it with errors.As against interface{ Field() string }.
//
// # Inside the Transport
//
// `admission.New(next, policy)` is an `http.RoundTripper` that is a request's
// one retry owner (`admission/doc.go` has the rule and its reasons): a 429,
// or a 503 that advises a wait (as `retryafter.FromResponse` reads it, in
// any dialect, from the header and the first 64 KiB of the refusal's body,
// which the caller still gets whole), is slept for the advised wait × U[1, 1+jitter]
// when that ends within the request's latency budget (a context deadline
// shortens it), else redirected once to the fallback, else given up
// (`*GiveUpError`). The budget bounds the whole request: the decision is
// taken when the refusal's body has been read, and that read ends when the
// budget does. A transport error is not retried. A `Policy`'s zero numbers
// mean none (the zero `Policy` sends once, with no budget and no jitter);
// `admission.DefaultPolicy()` is the recommended one (3 attempts, 30 s,
// jitter 0.2, the `Default…` constants). A request whose
// `X-Stainless-Retry-Count` is anything but a plain `0` is another owner's
// retry. Error classes are the `Class*` constants (`results.Class*` for the
// `error` column). Each attempt is one
// `Decision` (safe to log) to `Policy.Observe`, and one `Attempt` (with the
// response header and times) to a `WithAttemptObserver` context, for callers
// that write a row per attempt; its `Action` values are the
// `results.Decision*` constants. Every wait is on the runtime clock, so its
// tests run in synctest bubbles over `internal/memnet`.
//
// The field's client policies are settings of one client each, in
// process only (a Coordinator shares none of them): `Throttle`
// (`throttle.go`, the SRE book's client-side throttling), `RetryQuota`
// (`quota.go`, the AWS SDKs' retry quota and gRPC's retry throttling),
// `Adaptive` (`adaptive.go`, the AWS SDKs' CUBIC token bucket),
// `ChainedBackoff`/`Decorrelated` (`decorrelated.go`, a backoff fed its own
// previous wait) and `PaceConfig.Utilization` (`utilization.go`: readings of
// `retryafter.Advice.UtilizationPct` or the remaining limits become the
// Pace's ordinary steps, a reading's cut carried in the step's `Config`, so
// a coordinated Pace needs nothing new). Before an attempt to the primary
// target go the shared cooldown, then the Gates (`gate.go`): the Throttle,
// the Pace (not a Gate: its state is a fleet's), the Adaptive rate, the
// RetryQuota and `Policy.Gates`; each answer teaches the Pace and then the
// Gates (`answered`, `learn.go`); `Policy.Rule` (`rule.go`) sees each
// refusal the Policy would retry. docs/policies.md has each one's source.
// Each decision records its Reason as parts (fixed words, durations,
// numbers) in a room of the request's (`reason.go`); they are put in
// words only when the Reason is read.
package admission
