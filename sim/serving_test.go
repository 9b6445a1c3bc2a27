package sim

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"
)

// chunkClock records when each streamed content chunk was written, on
// the clock of the synctest bubble it runs in.
type chunkClock struct {
	h  http.Header
	mu sync.Mutex
	at []time.Time
}

func (w *chunkClock) Header() http.Header { return w.h }
func (w *chunkClock) WriteHeader(int)     {}
func (w *chunkClock) Flush()              {}
func (w *chunkClock) Write(p []byte) (int, error) {
	if strings.Contains(string(p), `"delta":{"content":"`) {
		w.mu.Lock()
		w.at = append(w.at, time.Now())
		w.mu.Unlock()
	}
	return len(p), nil
}

// streamChunks sends n streamed chat calls of promptTokens (4 characters
// each) and maxTokens at once, at the bubble's now, and returns when
// each one's content chunks were written, relative to that now.
func streamChunks(t *testing.T, s *Server, n, promptTokens, maxTokens int) [][]time.Duration {
	t.Helper()
	start := time.Now()
	body := `{"messages":[{"role":"user","content":"` + strings.Repeat("p", 4*promptTokens) + `"}],"max_tokens":` + strconv.Itoa(maxTokens) + `,"stream":true}`
	ws := make([]*chunkClock, n)
	var wg sync.WaitGroup
	for i := range ws {
		ws[i] = &chunkClock{h: http.Header{}}
		wg.Go(func() {
			r := httptest.NewRequest(http.MethodPost, azurePath, strings.NewReader(body)).WithContext(context.Background())
			r.Header.Set("Api-Key", "k"+strconv.Itoa(i))
			s.ServeHTTP(ws[i], r)
		})
	}
	wg.Wait()
	out := make([][]time.Duration, n)
	for i, w := range ws {
		for _, at := range w.at {
			out[i] = append(out[i], at.Sub(start))
		}
		if len(out[i]) == 0 {
			t.Fatalf("call %d of %d: no content chunk", i+1, n)
		}
	}
	return out
}

// servingConfig is the default deployment with room for every call of
// these tests: a bucket deep enough that none is refused.
func servingConfig() Config {
	cfg := DefaultConfig()
	cfg.BucketDepth = time.Hour
	return cfg
}

// TestTTFTGrowsWithThePrompt: on an idle deployment a prompt's first
// token comes PTU × PrefillTokensPerPTU tokens a second of prefill
// later the longer it is, a prompt of PrefillRefTokens at TTFT; and a
// prompt admitted behind another waits for that one's prefill too.
func TestTTFTGrowsWithThePrompt(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		cfg := servingConfig()
		rate := cfg.PTU * PrefillTokensPerPTU // 17,000 tokens/s
		ttft := func(prompt int) time.Duration {
			s, err := New(cfg)
			if err != nil {
				t.Fatal(err)
			}
			return streamChunks(t, s, 1, prompt, 50)[0][0]
		}
		t500, t4000, tRef := ttft(500), ttft(4000), ttft(PrefillRefTokens)
		// Each duration is rounded to the nanosecond once: the tolerance.
		const tol = 2 * time.Nanosecond
		if want := seconds(3500 / rate); (t4000 - t500 - want).Abs() > tol {
			t.Errorf("TTFT at 4,000 tokens %v, at 500 %v: %v more, want 3,500 ÷ %g tokens/s = %v", t4000, t500, t4000-t500, rate, want)
		}
		if tRef != cfg.TTFT {
			t.Errorf("TTFT at %d tokens %v, want --sim-ttft %v", PrefillRefTokens, tRef, cfg.TTFT)
		}
		// Two 4,000-token prompts at once: the second is read after the first.
		s, err := New(cfg)
		if err != nil {
			t.Fatal(err)
		}
		chunks := streamChunks(t, s, 2, 4000, 50)
		first, second := min(chunks[0][0], chunks[1][0]), max(chunks[0][0], chunks[1][0])
		if want := seconds(4000 / rate); first != t4000 || (second-first-want).Abs() > tol {
			t.Errorf("two at once: first tokens at %v and %v, want %v and %v later", first, second, t4000, want)
		}
	})
}

// TestTPOTRisesNearSaturation: one stream's chunks come TPOT a token
// apart; with more answers in flight than the deployment decodes at
// 1/TPOT each (D ÷ OutputWeight output tokens a second, all together),
// each gets its share: n ÷ that rate a token.
func TestTPOTRisesNearSaturation(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		cfg := servingConfig()
		decode := cfg.DrainTokensPerSecond() / cfg.OutputWeight // 2,361 tokens/s: 18.9 streams at 8 ms
		gap := func(streams int) time.Duration {
			s, err := New(cfg)
			if err != nil {
				t.Fatal(err)
			}
			c := streamChunks(t, s, streams, 10, 200)[0]
			if len(c) < 3 {
				t.Fatalf("%d streams: %d chunks", streams, len(c))
			}
			return (c[2] - c[1]) / streamChunkTokens // both chunks of 16 tokens, every stream still in flight
		}
		alone, ten, sixty := gap(1), gap(10), gap(60)
		if alone != cfg.TPOT || ten != cfg.TPOT {
			t.Errorf("per token: alone %v, with 10 in flight %v; want TPOT %v (far from saturation)", alone, ten, cfg.TPOT)
		}
		if want := seconds(60 / decode); sixty <= cfg.TPOT || (sixty-want).Abs() > time.Nanosecond {
			t.Errorf("per token with 60 in flight: %v, want 60 ÷ %.0f tokens/s = %v", sixty, decode, want)
		}
	})
}

// TestServingForgetsWhatCompleted: every admitted answer leaves the ones
// in flight once complete, or once its client left — whole, streamed,
// spilled, on the gateway — or the decode share would grow for good.
func TestServingForgetsWhatCompleted(t *testing.T) {
	for _, profile := range []string{ProfilePTU, ProfileGateway} {
		synctest.Test(t, func(t *testing.T) {
			cfg := servingConfig()
			cfg.Profile = profile
			cfg.SpilloverDeployment = "std"
			s, err := New(cfg)
			if err != nil {
				t.Fatal(err)
			}
			var wg sync.WaitGroup
			for i := range 40 {
				wg.Go(func() {
					body := `{"messages":[{"role":"user","content":"hello"}],"max_tokens":200,"stream":` + strconv.FormatBool(i%2 == 0) + `}`
					path := azurePath
					if i%5 == 0 {
						path = "/openai/deployments/std/chat/completions?api-version=2024-10-21"
					}
					ctx, cancel := context.WithCancel(context.Background())
					defer cancel()
					if i%3 == 0 { // a client that leaves mid-answer
						go func() { time.Sleep(300 * time.Millisecond); cancel() }()
					}
					r := httptest.NewRequest(http.MethodPost, path, strings.NewReader(body)).WithContext(ctx)
					r.Header.Set("Api-Key", "k"+strconv.Itoa(i%4))
					s.ServeHTTP(&chunkClock{h: http.Header{}}, r)
				})
			}
			wg.Wait()
			s.mu.Lock()
			active, backlog := s.serving.active, s.serving.backlog
			s.mu.Unlock()
			if active != 0 || s.Stats().Admitted == 0 {
				t.Errorf("%s: %d answers still in flight after all returned (%d admitted; prefill backlog %.0f)", profile, active, s.Stats().Admitted, backlog)
			}
		})
	}
}
