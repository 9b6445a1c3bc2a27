package retryafter

import (
	"net/http"
	"time"

	"github.com/ptuprobe/ptuprobe/internal/httpfield"
	"github.com/ptuprobe/ptuprobe/results"
)

// anthropicFamily reads Anthropic's fields. The tokens-* fields are the
// token limit (Anthropic: "the most restrictive limit currently in
// effect"); the input- and output-tokens limits count only when they are
// exhausted. A reset is an RFC 3339 time, measured against clk.
func anthropicFamily(f *family, h http.Header, clk *clock) {
	*f = family{dialect: results.DialectAnthropic, source: results.WaitAnthropicReset}
	readReset := func(v string) (float64, bool) {
		t, err := time.Parse(time.RFC3339, v)
		if err != nil {
			return 0, false
		}
		return untilMS(t, clk.at())
	}
	f.limits = make([]limit, 0, 4)
	for i := 0; i < len(httpfield.AnthropicFields); i += 3 {
		f.limits = append(f.limits, fieldLimit(h, httpfield.AnthropicFields[i:i+3], &f.present, readReset))
	}
	f.requests, f.tokens = f.limits[0], f.limits[1]
}
