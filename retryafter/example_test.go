package retryafter_test

import (
	"fmt"
	"net/http"
	"time"

	"github.com/ptuprobe/ptuprobe/retryafter"
)

// An OpenAI 429 that states no retry-after, only the reset of the
// exhausted token limit; and a Gemini 429, whose advice is in its body.
func ExampleFromResponse() {
	now := time.Date(2026, 11, 29, 12, 0, 0, 0, time.UTC)

	h := http.Header{}
	h.Set("X-Ratelimit-Limit-Tokens", "150000")
	h.Set("X-Ratelimit-Remaining-Tokens", "0")
	h.Set("X-Ratelimit-Reset-Tokens", "1m30.5s")
	a := retryafter.FromResponse(http.StatusTooManyRequests, h, nil, now)
	fmt.Println(a.Dialect, a.Wait.Source, a.Wait.MS, a.LimitTokens)

	body := []byte(`{"error":{"code":429,"status":"RESOURCE_EXHAUSTED","details":[
		{"@type":"type.googleapis.com/google.rpc.RetryInfo","retryDelay":"22s"}]}}`)
	a = retryafter.FromResponse(http.StatusTooManyRequests, http.Header{}, body, now)
	fmt.Println(a.Dialect, a.Wait.Source, a.Wait.MS)
	// Output:
	// openai openai-reset 90500 150000
	// gemini gemini-retry-delay 22000
}

// ExampleFromHeader reads the advised wait of Azure OpenAI's 429 from its
// retry-after fields alone: retry-after-ms, in milliseconds, wins over
// retry-after, in seconds.
func ExampleFromHeader() {
	h := http.Header{}
	h.Set("Retry-After-Ms", "1250")
	h.Set("Retry-After", "2")
	w := retryafter.FromHeader(h, time.Now())
	fmt.Println(w.MS, w.Source)
	// Output:
	// 1250 retry-after-ms
}
