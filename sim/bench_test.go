package sim

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// benchServer is a deployment that is always over 100% (429 path) or
// never (200 path), with no latency, answering the client's default
// request (~1,000 prompt tokens, max_tokens 100).
func benchServer(b *testing.B, overloaded bool) (*Server, string) {
	b.Helper()
	cfg := DefaultConfig()
	cfg.TTFT, cfg.TPOT = 0, 0
	if overloaded {
		cfg.PTU = 0.001
		cfg.BurstPct = 0
		cfg.Clock = NewManualClock(t0)
	} else {
		cfg.PTU, cfg.TokensPerPTU = 1e6, 1e8 // drains 1.7e12 tokens/s of wall time: never full
	}
	s, err := New(cfg)
	if err != nil {
		b.Fatal(err)
	}
	return s, chatBody(4000, 100)
}

func benchServe(b *testing.B, overloaded bool, want int) {
	s, body := benchServer(b, overloaded)
	// Fill the bucket once so every later request finds it over 100%.
	s.ServeHTTP(httptest.NewRecorder(), httptest.NewRequest("POST", azurePath, strings.NewReader(body)))
	b.ReportAllocs()
	b.SetBytes(int64(len(body)))
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			rec := httptest.NewRecorder()
			s.ServeHTTP(rec, httptest.NewRequest("POST", azurePath, strings.NewReader(body)))
			if rec.Code != want {
				b.Fatalf("status %d, want %d", rec.Code, want)
			}
		}
	})
}

// BenchmarkServe429 is the handler's refusal path, without the network.
func BenchmarkServe429(b *testing.B) { benchServe(b, true, http.StatusTooManyRequests) }

// BenchmarkServe200 is the handler's admission path with zero latency.
func BenchmarkServe200(b *testing.B) { benchServe(b, false, http.StatusOK) }

// BenchmarkParseRequest is the body parser on the client's default body.
func BenchmarkParseRequest(b *testing.B) {
	body := []byte(chatBody(4000, 100))
	b.ReportAllocs()
	b.SetBytes(int64(len(body)))
	for b.Loop() {
		if _, err := parseRequest(body, kindChat, DefaultMaxTokens); err != nil {
			b.Fatal(err)
		}
	}
}
