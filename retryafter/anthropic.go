package retryafter

import (
	"net/http"
	"time"

	"github.com/ptuprobe/ptuprobe/results"
)

// anthropicFields are Anthropic's rate-limit fields, per limit (requests,
// tokens, input tokens, output tokens): limit, remaining, reset.
var anthropicFields = [...]string{
	"Anthropic-Ratelimit-Requests-Limit", "Anthropic-Ratelimit-Requests-Remaining", "Anthropic-Ratelimit-Requests-Reset",
	"Anthropic-Ratelimit-Tokens-Limit", "Anthropic-Ratelimit-Tokens-Remaining", "Anthropic-Ratelimit-Tokens-Reset",
	"Anthropic-Ratelimit-Input-Tokens-Limit", "Anthropic-Ratelimit-Input-Tokens-Remaining", "Anthropic-Ratelimit-Input-Tokens-Reset",
	"Anthropic-Ratelimit-Output-Tokens-Limit", "Anthropic-Ratelimit-Output-Tokens-Remaining", "Anthropic-Ratelimit-Output-Tokens-Reset",
}

// anthropicFamily reads Anthropic's fields. The tokens-* fields are the
// token limit (Anthropic: "the most restrictive limit currently in
// effect"); the input- and output-tokens limits count only when they are
// exhausted. A reset is an RFC 3339 time, measured against ref.
func anthropicFamily(h http.Header, ref time.Time) family {
	f := family{dialect: results.DialectAnthropic, source: results.WaitAnthropicReset}
	readReset := func(v string) (float64, bool) {
		t, err := time.Parse(time.RFC3339, v)
		if err != nil {
			return 0, false
		}
		return untilMS(t, ref)
	}
	f.limits = make([]limit, 0, 4)
	for i := 0; i < len(anthropicFields); i += 3 {
		f.limits = append(f.limits, fieldLimit(h, anthropicFields[i:i+3], &f.present, readReset))
	}
	f.requests, f.tokens = f.limits[0], f.limits[1]
	return f
}
