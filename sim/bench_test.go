package sim

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
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
	benchServeWith(b, overloaded, want, nil, 0)
}

// benchServeWith is benchServe with a tokenizer (tokens) and, when
// counted > 0, every request carrying its count (WithPromptTokens), as
// the policy lab's and fit's do. Each request's prompt is the client's
// kind: a lead of its own, then a filler all share.
func benchServeWith(b *testing.B, overloaded bool, want int, tokens TokenCounter, counted int) {
	s, body := benchServer(b, overloaded)
	if tokens != nil {
		s.tokens = newTokenMemo(tokens)
	}
	if tokens != nil || counted > 0 {
		benchUnique(b, s, want, counted)
		return
	}
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

// benchUnique serves requests whose prompts differ in their lead.
func benchUnique(b *testing.B, s *Server, want, counted int) {
	bodies := make([]string, 256)
	for i := range bodies {
		bodies[i] = `{"messages":[{"role":"user","content":"` + syntheticPrompt(i, 1000) + `"}],"max_tokens":100}`
	}
	ctx := context.Background()
	if counted > 0 {
		ctx = WithPromptTokens(ctx, counted)
	}
	s.ServeHTTP(httptest.NewRecorder(), httptest.NewRequest("POST", azurePath, strings.NewReader(bodies[0])))
	var seq atomic.Int64
	b.ReportAllocs()
	b.SetBytes(int64(len(bodies[0])))
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			rec := httptest.NewRecorder()
			r := httptest.NewRequest("POST", azurePath, strings.NewReader(bodies[seq.Add(1)%int64(len(bodies))]))
			s.ServeHTTP(rec, r.WithContext(ctx))
			if rec.Code != want {
				b.Fatalf("status %d, want %d", rec.Code, want)
			}
		}
	})
}

// BenchmarkServe200Unique is the admission path on prompts that differ
// in their lead, counted by characters.
func BenchmarkServe200Unique(b *testing.B) {
	s, _ := benchServer(b, false)
	benchUnique(b, s, http.StatusOK, 0)
}

// BenchmarkServe200Tokenizer is the admission path counting each
// request's prompt under o200k_base: the lead's chunk counted, the
// filler's remembered.
func BenchmarkServe200Tokenizer(b *testing.B) {
	benchServeWith(b, false, http.StatusOK, o200k(b), 0)
}

// BenchmarkServe200Counted is the admission path of an in-process caller
// that gives its count: the body is not counted.
func BenchmarkServe200Counted(b *testing.B) {
	benchServeWith(b, false, http.StatusOK, o200k(b), 1000)
}

// BenchmarkServe429Tokenizer is the refusal path counting under
// o200k_base.
func BenchmarkServe429Tokenizer(b *testing.B) {
	benchServeWith(b, true, http.StatusTooManyRequests, o200k(b), 0)
}

// BenchmarkNewServeOne is a fresh simulator that answers one request on
// a manual clock: what a fit pays per point it tries for each plan of a
// small run (it makes a simulator per point; issue 39, round 9: the
// parse cache's table was zeroed whole in each).
func BenchmarkNewServeOne(b *testing.B) {
	cfg := DefaultConfig()
	cfg.TTFT, cfg.TPOT = 0, 0
	cfg.Clock = NewManualClock(t0)
	body := chatBody(4000, 100)
	b.ReportAllocs()
	for b.Loop() {
		s, err := New(cfg)
		if err != nil {
			b.Fatal(err)
		}
		rec := httptest.NewRecorder()
		s.ServeHTTP(rec, httptest.NewRequest("POST", azurePath, strings.NewReader(body)))
		if rec.Code != http.StatusOK {
			b.Fatalf("status %d", rec.Code)
		}
	}
}
