package retryafter

import (
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/ptuprobe/ptuprobe/internal/httpfield"
	"github.com/ptuprobe/ptuprobe/results"
)

// Advice is everything a response advised about its rate limits: the wait
// before a retry, the dialect it spoke, and what it advertised of its
// request and token limits. Numbers it did not advertise are
// results.None.
type Advice struct {
	// Wait is the advised wait and the field it came from (the package
	// documentation has the precedence).
	Wait Wait
	// Dialect is whose fields (or error body) the response spoke: one of
	// the results.Dialect* constants.
	Dialect string
	// RemainingRequests and RemainingTokens are what is left of the
	// request and token limits.
	RemainingRequests, RemainingTokens int
	// LimitRequests and LimitTokens are the limits themselves.
	LimitRequests, LimitTokens int
	// ResetRequestsMS and ResetTokensMS are how long until each limit
	// resets, in ms.
	ResetRequestsMS, ResetTokensMS float64
	// UtilizationPct is the utilization an Azure OpenAI provisioned (PTU)
	// deployment reports in azure-openai-deployment-utilization, a
	// percentage ("NN.N%", the % optional; over 100 while it refuses), on
	// answers and refusals alike.
	UtilizationPct float64
}

// MaxBody bounds the body FromResponse reads for advice: a Google error
// document is a few KB, and the client keeps (and admission reads) at most
// 64 KiB of a body. A longer body is not read at all.
const MaxBody = 64 << 10

// FromResponse reads a response's advice: its status, header h and body
// (what the caller kept of it, at most MaxBody bytes; nil when none was
// kept); now is the clock for times the response states as dates, when
// it has no usable Date header. Of the body it reads only a Google error's
// google.rpc.RetryInfo, and only for a status of 400 or more: a body that
// does not hold that name is not read at all. It never fails: a field it
// cannot read is unusable advice (Wait.Source "invalid" when nothing
// usable is left), never a guess.
func FromResponse(status int, h http.Header, body []byte, now time.Time) (a Advice) {
	fromResponse(&a, status, h, body, now, scanKeys(h))
	return a
}

// fromResponse is FromResponse reading the families keys allows: a
// family none of whose fields can be in h (no key has its prefix) is
// absent, what it would read known without reading. It fills a in place
// (a returned Advice took room twice in this frame, which is on the stack
// of every request: bench/README.md, memory per open stream).
func fromResponse(a *Advice, status int, h http.Header, body []byte, now time.Time, keys int) {
	clk := &clock{date: h.Get("Date"), now: now}
	var items []sfItem
	var dict []sfMember
	var named, numeric []sfItem
	if keys&keyRatelimit != 0 {
		items, dict = rateLimitField(h)
		named, numeric = policyField(h)
	}
	// Each family is read into its place: a family returned by value took
	// a temporary of its own in this frame, 2.5 KB in all, which pushed
	// the stack of a client's request past its first 4 KiB. The places
	// are pooled, not in this frame either: their 640 bytes here left a
	// client's worker 128–192 bytes of frame from doubling its stack, on
	// the deepest path it takes (bench/README.md, round 11). Every family
	// function sets the whole of its place.
	fams := familyPool.Get().(*[5]family)
	if keys&keyXRatelimit != 0 {
		openAIFamily(&fams[0], h)
		xRateLimitFamily(&fams[4], h, clk)
	} else {
		absent(&fams[0], results.DialectOpenAI, results.WaitOpenAIReset)
		absent(&fams[4], results.DialectXRate, results.WaitXRateLimitReset)
	}
	if keys&keyAnthropic != 0 {
		anthropicFamily(&fams[1], h, clk)
	} else {
		absent(&fams[1], results.DialectAnthropic, results.WaitAnthropicReset)
	}
	ietfFamily(&fams[2], items, newPolicySet(named))
	if keys&keyRatelimit != 0 {
		legacyFamily(&fams[3], h, dict, numeric, clk)
	} else {
		absent(&fams[3], results.DialectLegacy, results.WaitRateLimitReset)
	}
	*a = Advice{UtilizationPct: results.None}
	if keys&keyAzure != 0 {
		a.UtilizationPct = utilization(httpfield.Field(h, "Azure-Openai-Deployment-Utilization"))
	}
	a.RemainingRequests, a.LimitRequests, a.ResetRequestsMS = firstKnown(fams[:], func(f *family) limit { return f.requests })
	a.RemainingTokens, a.LimitTokens, a.ResetTokensMS = firstKnown(fams[:], func(f *family) limit { return f.tokens })

	w := waitAt(retryFieldsOf(h), clk)
	g := geminiAdvice(status, body)
	switch {
	case w.Usable():
		a.Wait = w
	case g.usable:
		a.Wait = Wait{MS: g.ms, Source: results.WaitGeminiRetryDelay}
	case w.Source == results.WaitInvalid || g.present:
		a.Wait = Wait{MS: results.None, Source: results.WaitInvalid}
	case status == http.StatusTooManyRequests || status == http.StatusServiceUnavailable:
		a.Wait = resetWait(fams[:])
	default:
		a.Wait = Wait{MS: results.None, Source: results.WaitNone}
	}
	a.Dialect = dialect(h, a.Wait.Source, fams[:], g.present, keys&keyAzure != 0)
	familyPool.Put(fams)
}

// familyPool holds the families' places of fromResponse.
var familyPool = sync.Pool{New: func() any { return new([5]family) }}

// clock is the time a response's dates and resets are measured against:
// its Date header when that parses, else now. The Date is parsed once,
// and only when a date or reset is read: most responses have none.
type clock struct {
	date   string
	now    time.Time
	ref    time.Time
	parsed bool
}

func (c *clock) at() time.Time {
	if !c.parsed {
		c.parsed, c.ref = true, c.now
		if d, ok := httpDate(httpfield.TrimOWS(c.date)); ok {
			c.ref = d
		}
	}
	return c.ref
}

// Which fields a header's keys may hold, from one pass over them.
const (
	keyXRatelimit = 1 << iota // X-Ratelimit-*: OpenAI's and X-RateLimit-*
	keyAnthropic              // Anthropic-Ratelimit-*
	keyRatelimit              // Ratelimit*: the IETF drafts' fields
	keyAzure                  // a field only Azure OpenAI sends

	keyFamilies = keyXRatelimit | keyAnthropic | keyRatelimit
)

// scanKeys reports which families' fields h may hold. The values are read
// by exact (canonical) name, so a family is possible only when a key
// starts with its canonical prefix. keyAzure is set when h carries a field
// only Azure OpenAI sends: azure-openai-* (deployment utilization), x-ms-*
// (region, deployment name, spillover) or apim-request-id (retry-after-ms,
// the other, is read by name). Only their presence is read, never their
// values, and case-insensitively.
func scanKeys(h http.Header) int {
	keys := 0
	for k := range h {
		switch {
		case strings.HasPrefix(k, "X-Ratelimit-"):
			keys |= keyXRatelimit
		case strings.HasPrefix(k, "Anthropic-Ratelimit-"):
			keys |= keyAnthropic
		case strings.HasPrefix(k, "Ratelimit"):
			keys |= keyRatelimit
		}
		if hasPrefixFold(k, "x-ms-") || hasPrefixFold(k, "azure-openai-") || strings.EqualFold(k, "apim-request-id") {
			keys |= keyAzure
		}
	}
	return keys
}

// absent fills f with what a family reads of a response that holds none of its
// fields: nothing, known or present.
func absent(f *family, dialect, source string) {
	*f = family{}
	f.dialect, f.source = dialect, source
	f.requests, f.tokens = unknownLimit(), unknownLimit()
}

// limit is what a dialect advertised of one limit.
type limit struct {
	remaining, max int     // None when absent or unreadable
	reset          float64 // ms until it resets; None when absent or unreadable
	resetBad       bool    // a reset was given but is no usable time
}

func unknownLimit() limit {
	return limit{remaining: results.None, max: results.None, reset: results.None}
}

func (l limit) known() bool { return l.remaining >= 0 || l.max >= 0 || l.reset >= 0 }

// family is what one dialect's fields said.
type family struct {
	dialect string
	source  string // the wait source of its resets
	present bool   // one of its fields is in the response
	// requests and tokens are the limits it reports as the request and
	// token limits.
	requests, tokens limit
	// limits are every limit it advertised, whose exhaustion (remaining
	// 0) makes its reset a wait.
	limits []limit
}

// firstKnown is the request or token limit of the first family that
// advertised it: OpenAI's x-ratelimit-*, then Anthropic's, then the IETF
// fields, the legacy ones and X-RateLimit-*.
func firstKnown(fams []family, pick func(*family) limit) (remaining, max int, reset float64) {
	for i := range fams {
		if l := pick(&fams[i]); l.known() {
			return l.remaining, l.max, l.reset
		}
	}
	return results.None, results.None, results.None
}

// resetWait is the wait of a refusal without retry advice: the reset of
// an exhausted limit (remaining 0), the longest if several are; invalid
// when every exhausted limit's reset is unreadable.
func resetWait(fams []family) Wait {
	best := Wait{MS: results.None, Source: results.WaitNone}
	bad := false
	for _, f := range fams {
		for _, l := range f.limits {
			switch {
			case l.remaining != 0:
			case l.reset > best.MS:
				best = Wait{MS: l.reset, Source: f.source}
			case l.reset < 0 && l.resetBad:
				bad = true
			}
		}
	}
	if best.Usable() || !bad {
		return best
	}
	return Wait{MS: results.None, Source: results.WaitInvalid}
}

// dialect names the dialect of a response: the one whose reset gave the
// wait, else the first whose fields are present, in the order of
// results.Dialects.
func dialect(h http.Header, source string, fams []family, gemini, azureKey bool) string {
	if source == results.WaitGeminiRetryDelay {
		return results.DialectGemini
	}
	for _, f := range fams {
		if f.source == source {
			return f.dialect
		}
	}
	present := func(d string) bool {
		for _, f := range fams {
			if f.dialect == d {
				return f.present
			}
		}
		return false
	}
	switch {
	case present(results.DialectAnthropic):
		return results.DialectAnthropic
	case azureKey || httpfield.TrimOWS(httpfield.Field(h, "Retry-After-Ms")) != "":
		return results.DialectAzure
	case present(results.DialectOpenAI):
		return results.DialectOpenAI
	case present(results.DialectIETF):
		return results.DialectIETF
	case present(results.DialectLegacy):
		return results.DialectLegacy
	case present(results.DialectXRate):
		return results.DialectXRate
	case gemini:
		return results.DialectGemini
	case httpfield.TrimOWS(httpfield.Field(h, "Retry-After")) != "":
		return results.DialectRFC9110
	}
	return results.DialectNone
}

func hasPrefixFold(s, prefix string) bool {
	return len(s) >= len(prefix) && strings.EqualFold(s[:len(prefix)], prefix)
}

// count reads a non-negative integer of at most 18 digits (no sign, no
// point), or results.None.
func count(s string) int {
	s = httpfield.TrimOWS(s)
	if s == "" || len(s) > 18 {
		return results.None
	}
	v := 0
	for i := 0; i < len(s); i++ {
		if !isDigit(s[i]) {
			return results.None
		}
		v = v*10 + int(s[i]-'0')
	}
	return v
}

// untilMS is the wait until t seen from ref, in ms: 0 for a time passed;
// ok is false past results.MaxWaitMS.
func untilMS(t, ref time.Time) (float64, bool) {
	// Sub saturates at about 292 years, well past the cap.
	wait := max(float64(t.Sub(ref))/float64(time.Millisecond), 0)
	return wait, wait <= maxWaitMS
}

// utilization reads azure-openai-deployment-utilization's "NN.N%" (the %
// optional) as a percentage, or results.None: a plain decimal only, at
// most 10⁶ (a percentage past that is no reading).
func utilization(v string) float64 {
	v = strings.TrimSuffix(v, "%")
	f, ok := httpfield.Number(httpfield.TrimOWS(v))
	if !ok || f > 1e6 {
		return results.None
	}
	return f
}
