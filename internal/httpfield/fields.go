package httpfield

import "net/http"

// The fields whose values retryafter.FromResponse reads, by dialect, in
// canonical form; of any other field it reads at most the presence. They
// are named here, once, so that the client vets exactly what the reader
// reads (Reads).
var (
	// RetryFields are the retry-after fields and the Date they are
	// measured against.
	RetryFields = [...]string{"Retry-After-Ms", "X-Ms-Retry-After-Ms", "Retry-After", "Date"}
	// OpenAIFields are OpenAI's rate-limit fields (Azure OpenAI sends the
	// remaining-* ones too), requests then tokens: limit, remaining, reset.
	OpenAIFields = [...]string{
		"X-Ratelimit-Limit-Requests", "X-Ratelimit-Remaining-Requests", "X-Ratelimit-Reset-Requests",
		"X-Ratelimit-Limit-Tokens", "X-Ratelimit-Remaining-Tokens", "X-Ratelimit-Reset-Tokens",
	}
	// AnthropicFields are Anthropic's rate-limit fields, per limit
	// (requests, tokens, input tokens, output tokens): limit, remaining,
	// reset.
	AnthropicFields = [...]string{
		"Anthropic-Ratelimit-Requests-Limit", "Anthropic-Ratelimit-Requests-Remaining", "Anthropic-Ratelimit-Requests-Reset",
		"Anthropic-Ratelimit-Tokens-Limit", "Anthropic-Ratelimit-Tokens-Remaining", "Anthropic-Ratelimit-Tokens-Reset",
		"Anthropic-Ratelimit-Input-Tokens-Limit", "Anthropic-Ratelimit-Input-Tokens-Remaining", "Anthropic-Ratelimit-Input-Tokens-Reset",
		"Anthropic-Ratelimit-Output-Tokens-Limit", "Anthropic-Ratelimit-Output-Tokens-Remaining", "Anthropic-Ratelimit-Output-Tokens-Reset",
	}
	// IETFFields are the fields of every version of the IETF draft
	// (RateLimit and RateLimit-Policy; the separate limit, remaining and
	// reset fields of drafts 00 to 06), and the X-RateLimit-* fields
	// before it, each triple in the order limit, remaining, reset.
	IETFFields = [...]string{
		"Ratelimit", "Ratelimit-Policy",
		"Ratelimit-Limit", "Ratelimit-Remaining", "Ratelimit-Reset",
		"X-Ratelimit-Limit", "X-Ratelimit-Remaining", "X-Ratelimit-Reset",
	}
	// AzureFields are Azure OpenAI's own: a provisioned deployment's
	// utilization.
	AzureFields = [...]string{"Azure-Openai-Deployment-Utilization"}
)

// Reads reports whether retryafter reads the value of header field name:
// a caller that must vet values before they are read (ptuprobe's client
// checks them for echoed secrets) vets these.
//
// A name whose first letter, in either case, begins none of the fields is
// answered without canonicalizing it and looking it up (canonicalizing
// changes a letter's case, no more): Content-Type and Content-Length, on
// every answer, cost a byte's look-up (BenchmarkCaptureHeaders, client).
func Reads(name string) bool {
	return name != "" && readInitials[name[0]] && readFields[http.CanonicalHeaderKey(name)]
}

var readFields, readInitials = func() (map[string]bool, [256]bool) {
	m, initials := map[string]bool{}, [256]bool{}
	for _, names := range [][]string{RetryFields[:], OpenAIFields[:], AnthropicFields[:], IETFFields[:], AzureFields[:]} {
		for _, n := range names {
			m[n] = true
			c := n[0]
			initials[c] = true
			if 'A' <= c && c <= 'Z' {
				initials[c+'a'-'A'] = true
			}
		}
	}
	return m, initials
}()

// PresenceFields are the fields retryafter.FromResponse reads for their
// presence alone, by the start of their names, case aside: the rate-limit
// families' (X-Ratelimit-*, Anthropic-Ratelimit-*, Ratelimit*) and Azure
// OpenAI's own (X-Ms-*, Azure-Openai-*); and one by its whole name,
// PresenceField.
var PresenceFields = [...]string{"X-Ratelimit-", "Anthropic-Ratelimit-", "Ratelimit", "X-Ms-", "Azure-Openai-"}

// PresenceField is the one field retryafter.FromResponse reads for its
// presence by its whole name (Azure OpenAI's).
const PresenceField = "Apim-Request-Id"

// Silent reports whether retryafter.FromResponse reads nothing of h: no
// field whose value it reads (Reads) but Date, which dates the others,
// and none it reads for its presence (PresenceFields, PresenceField),
// whatever the case of the names. Such a header advises what an empty one
// does, with the same status and a body it does not read (retryafter's
// FuzzFromResponse holds the two to agree), so a caller may take that
// advice without reading the header: a success from a target that sends
// no rate-limit fields, for one (bench/README.md, round 11).
func Silent(h http.Header) bool {
	for k := range h {
		if !SilentField(k) {
			return false
		}
	}
	return true
}

// SilentField reports whether retryafter.FromResponse reads nothing of a
// field named name (Silent: all of a header's fields are silent), in any
// case: a name whose first letter begins none of the fields it reads or
// looks for (Content-Type, Content-Length) is answered at once.
func SilentField(name string) bool {
	if name == "" || !silentInitials[name[0]] || len(name) == len("Date") && equalFold(name, "Date") {
		return true
	}
	if Reads(name) || len(name) == len(PresenceField) && equalFold(name, PresenceField) {
		return false
	}
	for _, p := range PresenceFields {
		if len(name) >= len(p) && equalFold(name[:len(p)], p) {
			return false
		}
	}
	return true
}

// silentInitials are the first letters, in either case, of the fields
// Silent looks at: those Reads claims and the presence fields.
var silentInitials = func() [256]bool {
	initials := readInitials
	for _, n := range append(PresenceFields[:], PresenceField) {
		initials[n[0]] = true
		initials[n[0]|0x20] = true
	}
	return initials
}()

// equalFold is strings.EqualFold for ASCII names of equal length.
func equalFold(a, b string) bool {
	for i := 0; i < len(a); i++ {
		if a[i]|0x20 != b[i]|0x20 {
			return false
		}
	}
	return true
}
