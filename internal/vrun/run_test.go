package vrun

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"slices"
	"testing"
	"time"

	"github.com/ptuprobe/ptuprobe/sim"
)

var start = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

// outcome is what one planned send saw: when it went (virtual), its
// status, when its answer came and the length of its body.
type outcome struct {
	sent, answered time.Duration
	status, body   int
}

// play sends a burst of n at 0 and n more at 1 s, each at its offset,
// to a small PTU deployment, keeping only refusals' bodies.
func play(t *testing.T, ctx context.Context, n int) ([]outcome, error) {
	t.Helper()
	cfg := sim.DefaultConfig()
	cfg.PTU = 15
	r, err := New(cfg, Options{Start: start, BodyOf: func(s int) bool { return s == http.StatusTooManyRequests }})
	if err != nil {
		t.Fatal(err)
	}
	offsets := make([]time.Duration, 2*n)
	for i := n; i < 2*n; i++ {
		offsets[i] = time.Second
	}
	out := make([]outcome, len(offsets))
	url := "http://vrun.invalid/openai/deployments/" + sim.DefaultDeployment + "/chat/completions?api-version=2024-10-21"
	r.Plan(start, offsets, func(i int) {
		out[i].sent = r.Now().Sub(start)
		body := fmt.Appendf(nil, `{"messages":[{"role":"user","content":"vrun %04d"}],"max_tokens":50}`, i)
		req, _ := http.NewRequestWithContext(ctx, http.MethodPost, url, bytes.NewReader(body))
		req.Header.Set("Api-Key", "vrun")
		resp, err := r.Transport.RoundTrip(req)
		if err != nil {
			return
		}
		b, _ := io.ReadAll(resp.Body)
		out[i].status, out[i].body, out[i].answered = resp.StatusCode, len(b), r.Now().Sub(start)
	})
	return out, r.Play(ctx)
}

// TestPlanPlaysOnTheVirtualClock: each send goes at its offset on the
// virtual clock, an answer takes the simulator's latency on it, refusals
// keep their bodies and completions do not, and the same plan plays the
// same way twice.
func TestPlanPlaysOnTheVirtualClock(t *testing.T) {
	t.Parallel()
	out, err := play(t, context.Background(), 60)
	if err != nil {
		t.Fatal(err)
	}
	var ok, refused int
	for i, o := range out {
		if want := time.Duration(i/60) * time.Second; o.sent != want {
			t.Fatalf("send %d went at %v; want %v", i, o.sent, want)
		}
		switch o.status {
		case http.StatusOK:
			ok++
			// A prompt of a few tokens is read sooner than the 1,000 the
			// simulator's TTFT is of (sim/serving.go).
			least := sim.DefaultTTFT - time.Second*sim.PrefillRefTokens/(sim.DefaultPTU*sim.PrefillTokensPerPTU)
			if o.body != 0 || o.answered-o.sent < least {
				t.Errorf("send %d: a 2xx of %d bytes after %v", i, o.body, o.answered-o.sent)
			}
		case http.StatusTooManyRequests:
			refused++
			if o.body == 0 {
				t.Errorf("send %d: a 429 without its body", i)
			}
		default:
			t.Errorf("send %d: status %d", i, o.status)
		}
	}
	if ok == 0 || refused == 0 {
		t.Errorf("%d answered, %d refused: want both from a burst past the deployment", ok, refused)
	}
	again, err := play(t, context.Background(), 60)
	if err != nil || !slices.Equal(out, again) {
		t.Errorf("a second play differs (%v)", err)
	}
}

func TestPlayStopsWithItsContext(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := play(t, ctx, 5); !errors.Is(err, context.Canceled) {
		t.Errorf("%v; want context.Canceled", err)
	}
}

// TestRunIsAClock: Sleep moves the virtual clock, and nothing else.
func TestRunIsAClock(t *testing.T) {
	t.Parallel()
	r, err := New(sim.DefaultConfig(), Options{Start: start})
	if err != nil {
		t.Fatal(err)
	}
	var woke []time.Duration
	r.Go(start.Add(time.Hour), func() {
		if err := r.Sleep(context.Background(), 90*time.Minute); err == nil {
			woke = append(woke, r.Now().Sub(start))
		}
	})
	r.Go(start, func() { woke = append(woke, r.Now().Sub(start)) })
	if err := r.Play(context.Background()); err != nil {
		t.Fatal(err)
	}
	if want := []time.Duration{0, 150 * time.Minute}; !slices.Equal(woke, want) {
		t.Errorf("woke at %v; want %v", woke, want)
	}
	bad := sim.DefaultConfig()
	bad.PTU = -1
	if _, err := New(bad, Options{Start: start}); err == nil {
		t.Error("a simulator of -1 PTU: no error")
	}
}

// TestWithChunksSeesTheStreamAsItArrives: a streamed answer's writes are
// seen at their virtual times: the first after the time to first token,
// the later ones a decode step apart, the last when the answer ends; a
// request without WithChunks sees nothing and gets the same body.
func TestWithChunksSeesTheStreamAsItArrives(t *testing.T) {
	t.Parallel()
	cfg := sim.DefaultConfig()
	r, err := New(cfg, Options{Start: start})
	if err != nil {
		t.Fatal(err)
	}
	url := "http://vrun.invalid/openai/deployments/" + sim.DefaultDeployment + "/chat/completions?api-version=2024-10-21"
	var at []time.Duration
	var seen bytes.Buffer
	var ended time.Duration
	var body []byte
	r.Go(start, func() {
		ctx := WithChunks(context.Background(), func(p []byte) {
			if n := len(at); n == 0 || at[n-1] != r.Now().Sub(start) {
				at = append(at, r.Now().Sub(start))
			}
			seen.Write(p)
		})
		req, _ := http.NewRequestWithContext(ctx, http.MethodPost, url,
			bytes.NewReader([]byte(`{"messages":[{"role":"user","content":"chunks"}],"max_tokens":100,"stream":true}`)))
		req.Header.Set("Api-Key", "vrun")
		resp, err := r.Transport.RoundTrip(req)
		if err != nil {
			t.Error(err)
			return
		}
		body, _ = io.ReadAll(resp.Body)
		ended = r.Now().Sub(start)
	})
	if err := r.Play(context.Background()); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(seen.Bytes(), body) || !bytes.Contains(body, []byte("[DONE]")) {
		t.Fatalf("seen %d bytes, the body %d", seen.Len(), len(body))
	}
	if len(at) < 3 || at[0] <= 0 || at[len(at)-1] != ended {
		t.Fatalf("write times %v, answer ended at %v: want the first after a time to first token, several, the last at the end", at, ended)
	}
	for i := 1; i < len(at); i++ {
		if at[i] <= at[i-1] {
			t.Fatalf("write times do not rise: %v", at)
		}
	}
}
