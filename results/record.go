package results

import (
	"crypto/rand"
	"encoding/hex"
	"unicode"
	"unicode/utf8"
)

// None marks an absent numeric value (an empty CSV cell). Every numeric
// field that can be absent holds a value >= 0 when present.
const None = -1

// Shapes of traffic.
const (
	ShapeBurst     = "burst"
	ShapeScheduled = "scheduled"
)

// Default group labels per shape.
const (
	GroupBurst     = "burst-shaped"
	GroupScheduled = "scheduled-shaped"
	// GroupRefillProbe is the main job's refill probe's: burst-shaped
	// sends after a rest that follows the scheduled plan, in a group of
	// its own so that the burst group's waits stay the burst plan's.
	GroupRefillProbe = "refill-probe"
)

// Error classes for attempts that got no complete response.
const (
	ClassTimeout  = "timeout"
	ClassRefused  = "refused"
	ClassReset    = "reset"
	ClassCanceled = "canceled"
	ClassTLS      = "tls"
	ClassBody     = "body"
	// ClassHeaders: the response headers were larger than the client accepts
	// (a hostile or broken target); they were not read.
	ClassHeaders = "headers"
	// ClassLocal: the attempt failed on this machine before reaching the
	// target (out of file descriptors or local ports), not at the target.
	ClassLocal = "local"
	ClassOther = "other"
	// ClassCooldown and ClassPaced: not sent: the retry owner gave up on
	// the attempt before sending it (DecisionGiveUpLocal), because the
	// shared cooldown, or its pace's next send slot, would not end within
	// the request's budget.
	ClassCooldown = "cooldown"
	ClassPaced    = "paced"
	// ClassThrottled: not sent: the retry owner's client-side throttling
	// (the SRE book's adaptive throttling) rejected the attempt locally.
	ClassThrottled = "throttled"
	// ClassAdaptive: not sent: the next token of the retry owner's
	// adaptive rate limiter (the AWS SDKs' adaptive mode) would not come
	// within the request's budget.
	ClassAdaptive = "adaptive"
)

// Sources of the advised wait: which field of the response the wait was
// read from (package retryafter documents each and their precedence).
const (
	WaitRetryAfterMS      = "retry-after-ms"
	WaitXMSRetryAfterMS   = "x-ms-retry-after-ms" // other Azure services' ms field, read after retry-after-ms
	WaitRetryAfterSeconds = "retry-after-seconds"
	WaitRetryAfterDate    = "retry-after-date"
	// WaitGeminiRetryDelay: the retryDelay of a google.rpc.RetryInfo in
	// the error body (Gemini, Vertex AI).
	WaitGeminiRetryDelay = "gemini-retry-delay"
	// The reset of an exhausted limit, read only for a 429 or 503 that
	// carries no retry advice: the IETF RateLimit field's t of a policy
	// with r=0, RateLimit-Reset (or the draft-7 reset key),
	// X-RateLimit-Reset, x-ratelimit-reset-requests/-tokens,
	// anthropic-ratelimit-*-reset.
	WaitIETFReset       = "ietf-reset"
	WaitRateLimitReset  = "ratelimit-reset"
	WaitXRateLimitReset = "x-ratelimit-reset"
	WaitOpenAIReset     = "openai-reset"
	WaitAnthropicReset  = "anthropic-reset"
	WaitNone            = "none"
	WaitInvalid         = "invalid"
)

// WaitSources lists every wait source, in the order of precedence (none
// and invalid last). A reader checks a wait_source cell against it.
var WaitSources = []string{
	WaitRetryAfterMS, WaitXMSRetryAfterMS, WaitRetryAfterSeconds, WaitRetryAfterDate, WaitGeminiRetryDelay,
	WaitIETFReset, WaitRateLimitReset, WaitXRateLimitReset, WaitOpenAIReset, WaitAnthropicReset,
	WaitNone, WaitInvalid,
}

// Dialects of rate-limit advice: whose fields (or error body) a response
// spoke. Package retryafter documents how each is recognized.
const (
	DialectAzure     = "azure"       // Azure OpenAI: retry-after-ms, azure-openai-*, x-ms-*
	DialectOpenAI    = "openai"      // x-ratelimit-{limit,remaining,reset}-{requests,tokens}
	DialectAnthropic = "anthropic"   // anthropic-ratelimit-*
	DialectIETF      = "ietf"        // RateLimit / RateLimit-Policy, the current draft's lists
	DialectLegacy    = "ietf-legacy" // RateLimit-Limit/-Remaining/-Reset, the draft-7 RateLimit dictionary
	DialectXRate     = "x-ratelimit" // X-RateLimit-Limit/-Remaining/-Reset
	DialectGemini    = "gemini"      // google.rpc.RetryInfo in the error body
	DialectRFC9110   = "rfc9110"     // a bare retry-after
	DialectNone      = "none"        // no rate-limit field at all
)

// Dialects lists every dialect, in the order they are recognized.
var Dialects = []string{
	DialectAnthropic, DialectAzure, DialectOpenAI, DialectIETF, DialectLegacy,
	DialectXRate, DialectGemini, DialectRFC9110, DialectNone,
}

// MaxWaitMS bounds a believable advised wait, in milliseconds (about 31.7
// years): a larger value, whatever its unit or source, is not a wait a
// server means and is treated as invalid wherever a wait is read.
const MaxWaitMS = 1e12

// MaxHeaderLen bounds the raw header values kept in a Record.
const MaxHeaderLen = 64

// Record is one attempt: one row of a results file, in column order.
// Numeric fields that can be absent hold None.
type Record struct {
	RunID      string
	Shape      string
	Group      string
	Seq        int
	Attempt    int
	Wave       int // None for scheduled traffic
	IntendedMS float64
	SentMS     float64
	TTFBMS     float64 // None when no response headers arrived
	LatencyMS  float64
	Status     int    // 0 when no response came
	Error      string // "" or one of the Class* error classes
	// RetryAfterMS and RetryAfter are the headers as received: trimmed,
	// control characters removed, at most MaxHeaderLen bytes.
	RetryAfterMS string
	RetryAfter   string
	WaitMS       float64 // None unless WaitSource names a usable header
	WaitSource   string
	Spillover    bool

	RatelimitRemainingRequests int
	RatelimitRemainingTokens   int
	UtilizationPct             float64
	PromptTokens               int
	CachedTokens               int
	CompletionTokens           int
	MaxTokens                  int

	// Policy names the client policy (the retry owner's settings) that
	// sent the attempt; empty when nothing retried.
	Policy string
	// Decision is what the retry owner decided after this attempt: one of
	// the Decision* constants; empty when nothing retried.
	Decision string
	// Fallback is true when the attempt went to the fallback target (a
	// redirect: a spillover or standard deployment).
	Fallback bool

	// Dialect is the dialect of rate-limit advice the response spoke (one
	// of the Dialect* constants); empty when no response came.
	Dialect string
	// ResetRequestsMS and ResetTokensMS are how long until the request
	// and token limits reset, in ms; None when not advertised.
	ResetRequestsMS float64
	ResetTokensMS   float64
	// LimitRequests and LimitTokens are the advertised limits; None when
	// not advertised.
	LimitRequests int
	LimitTokens   int

	// Worker is the shard of a fleet run that sent the attempt, "I/N"
	// (worker I of N, each sending the arrivals whose seq is ≡ I mod N);
	// empty when one process sent the whole plan.
	Worker string

	// PromptTokensSent is the sender's own count of the prompt it sent,
	// in tokens (the text under the target's tokenizer and the chat
	// format's per-message overhead), so a refused attempt, which reports
	// no usage, still carries its cost; None for an attempt never sent,
	// or a body the sender did not build (raw).
	PromptTokensSent int
	// Token-level timing of a streamed answer, each in ms from the
	// attempt's send like LatencyMS; None for an answer not streamed (and
	// for a stream with no content event). TTFTMS is the first content
	// token (never a role-only, keep-alive or prompt-filter event);
	// ITLP50MS and ITLMaxMS the median and the largest gap between the
	// answer's content events (None with fewer than two); TPOTMS is
	// (LatencyMS − TTFTMS) / (output tokens − 1), vLLM's time per output
	// token (None with one output token).
	TTFTMS   float64
	ITLP50MS float64
	ITLMaxMS float64
	TPOTMS   float64
}

// Decisions of a retry owner after an attempt (admission.Action).
const (
	DecisionDone     = "done"
	DecisionSleep    = "sleep"
	DecisionRedirect = "redirect"
	DecisionGiveUp   = "give-up"
)

// Ends of a request whose last attempt was never sent: its row has status
// 0, no sent_ms, ttfb_ms or latency_ms, and the error class of what held
// it. Every request handed to a sender has a row, whatever ended it.
const (
	// DecisionGiveUpLocal: the retry owner gave up before sending the
	// attempt: the shared cooldown (error ClassCooldown), its pace's next
	// send slot (ClassPaced) or its adaptive rate's next token
	// (ClassAdaptive) would not end within the request's budget (or
	// MaxWait, or it held the last attempt MaxAttempts allows), its
	// client-side throttling rejected it (ClassThrottled), or the
	// request's deadline passed while it was held, or the attempt would
	// have gone past the run's cap on the time spent sending
	// (--max-duration, dispatch.Options.MaxDuration) (ClassTimeout).
	DecisionGiveUpLocal = "give-up-local"
	// DecisionInterrupted: the run was stopped (Ctrl-C) while the attempt
	// waited to be sent, for a retry's wait, the shared cooldown or the
	// pace's send slot (error ClassCanceled); nothing was sent after.
	DecisionInterrupted = "interrupted"
)

// NotSent reports whether the row is an attempt that was never sent
// (DecisionGiveUpLocal, DecisionInterrupted): the end of a planned request,
// not an HTTP attempt.
func (r *Record) NotSent() bool {
	return r.Decision == DecisionGiveUpLocal || r.Decision == DecisionInterrupted
}

// Blank returns a Record with every optional numeric field absent.
func Blank() Record {
	return Record{
		Wave: None, TTFBMS: None, WaitMS: None, WaitSource: WaitNone,
		RatelimitRemainingRequests: None, RatelimitRemainingTokens: None,
		UtilizationPct: None, PromptTokens: None, CachedTokens: None,
		CompletionTokens: None, MaxTokens: None,
		ResetRequestsMS: None, ResetTokensMS: None, LimitRequests: None, LimitTokens: None,
		PromptTokensSent: None,
		TTFTMS:           None, ITLP50MS: None, ITLMaxMS: None, TPOTMS: None,
	}
}

// HasWait reports whether the record carries a usable advised wait.
func (r *Record) HasWait() bool { return r.WaitMS >= 0 }

// Is429 reports whether the attempt was refused with HTTP 429.
func (r *Record) Is429() bool { return r.Status == 429 }

// NewRunID returns a random 8-hex-digit run identifier.
func NewRunID() string {
	var b [4]byte
	if _, err := rand.Read(b[:]); err != nil {
		return "00000000"
	}
	return hex.EncodeToString(b[:])
}

// CleanHeader makes a received header value fit to record, so a hostile
// target can neither inject rows, bloat the file, nor make it unreadable
// to a UTF-8 reader: control characters (C0, DEL and C1) are dropped,
// invalid UTF-8 becomes U+FFFD, spaces are trimmed, and the value is cut
// to at most MaxHeaderLen bytes at a rune boundary.
func CleanHeader(v string) string {
	out := make([]byte, 0, min(len(v), MaxHeaderLen))
	for i := 0; i < len(v); {
		r, size := utf8.DecodeRuneInString(v[i:]) // RuneError, 1 for an invalid byte
		i += size
		if unicode.IsControl(r) || (r == ' ' && len(out) == 0) {
			continue
		}
		if len(out)+utf8.RuneLen(r) > MaxHeaderLen {
			break
		}
		out = utf8.AppendRune(out, r)
	}
	return trimSpace(string(out))
}

func trimSpace(s string) string {
	i, j := 0, len(s)
	for i < j && s[i] == ' ' {
		i++
	}
	for j > i && s[j-1] == ' ' {
		j--
	}
	return s[i:j]
}
