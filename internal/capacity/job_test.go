package capacity

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ptuprobe/ptuprobe/analyze"
	"github.com/ptuprobe/ptuprobe/client"
	"github.com/ptuprobe/ptuprobe/dispatch"
	"github.com/ptuprobe/ptuprobe/internal/campaign"
	"github.com/ptuprobe/ptuprobe/internal/testkit"
	"github.com/ptuprobe/ptuprobe/results"
)

// TestCapacityOnTheWallClock: against a named target that streams its
// first four answers and refuses the rest, the ramp's first step (four
// requests) passes, the second (eight) fails and stops at its first
// judged refusal, and json holds the two steps and a capacity between
// them. Steps of testMinStep: 16/s and 32/s plan the four and eight
// requests 4/s and 8/s did in a second.
func TestCapacityOnTheWallClock(t *testing.T) {
	t.Parallel()
	var n atomic.Int64
	var refused atomic.Int64 // the first refusal's time (UnixNano)
	stalls := testkit.WatchStalls(t)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		if i := n.Add(1); i > 4 {
			refused.CompareAndSwap(0, time.Now().UnixNano())
			w.Header().Set("Retry-After-Ms", "100")
			w.WriteHeader(http.StatusTooManyRequests)
			return
		}
		w.Header().Set("Content-Type", "text/event-stream")
		for _, ev := range []string{
			`{"choices":[{"index":0,"delta":{"role":"assistant","content":""}}]}`,
			`{"choices":[{"index":0,"delta":{"content":"hi"}}]}`,
			`{"choices":[{"index":0,"delta":{"content":" there"}}]}`,
			`{"choices":[],"usage":{"prompt_tokens":10,"completion_tokens":2,"total_tokens":12}}`,
			`[DONE]`,
		} {
			io.WriteString(w, "data: "+ev+"\n\n")
			w.(http.Flusher).Flush()
		}
	}))
	defer srv.Close()
	dir := t.TempDir()
	job := Job{
		Config: Config{Goodput: 0.95, Max429Share: 0.05, MinRate: 16, MaxRate: 32, Factor: 2,
			StepDuration: testMinStep, Depth: 0, Repeats: 1},
		Target: campaign.Target{Spec: client.Spec{URL: srv.URL + "/v1/chat/completions", KeyOptional: true, Timeout: 10 * time.Second,
			PromptTokens: 10, MaxTokens: 5}},
		OutDir: dir, MaxInFlight: 16, RunID: "capacity-test", Group: "capacity",
	}
	if w := job.WorstCase(); w.Steps != 2 || w.Requests != 12 || w.Tokens != 12*15 {
		t.Errorf("worst case %+v; want 2 steps, 12 requests of 15 tokens", w)
	}
	res, err := Run(context.Background(), job)
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Steps) != 2 || !res.Steps[0].Passed || res.Steps[1].Passed || res.Steps[1].StoppedEarly == "" {
		t.Fatalf("steps %+v", res.Steps)
	}
	if res.Verdict != VerdictFound || !(res.Max > 16 && res.Max < 32) || res.Steps[0].TokensPerRequest != 12 {
		t.Errorf("%s %g/s, %g tokens a request", res.Verdict, res.Max, res.Steps[0].TokensPerRequest)
	}
	// The second step's eight sends are planned testMinStep/8 apart, the
	// last seven spacings after its first, refused: the stop cuts them
	// when the process reads that answer and judges it within those
	// 219 ms, a millisecond's work. A process that could not run for half
	// of them (a loaded machine: round 15 saw all twelve sent at load 10,
	// -test.cpu=1,4, 1 run in 7) is not judged on it; the step's verdict
	// (StoppedEarly, above) still is.
	from := time.Unix(0, refused.Load())
	window := 7 * testMinStep / 8
	if got := n.Load(); got >= 4+8 {
		if stalled := stalls.Total(from, from.Add(window)); stalled >= window/2 {
			t.Logf("%d requests, all planned, sent while the process stalled %v of the %v after the first refusal: not judged", got, stalled, window)
		} else {
			t.Errorf("%d requests: the failing step was not stopped early (stalled %v of %v)", got, stalled, window)
		}
	}
	b, err := os.ReadFile(filepath.Join(dir, FileJSON))
	if err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Max   float64           `json:"max_rate_per_s"`
		Steps []json.RawMessage `json:"steps"`
	}
	if err := json.Unmarshal(b, &doc); err != nil || len(doc.Steps) != 2 || doc.Max <= 16 {
		t.Errorf("json: %v %+v", err, doc)
	}
}

// TestCapacityRefusesAnUntimedSLO: an SLO on ttft against answers whose
// first token the client did not time ends the search with an error,
// not a capacity of 0 (a step of testMinStep, four requests).
func TestCapacityRefusesAnUntimedSLO(t *testing.T) {
	t.Parallel()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, `{"choices":[{"index":0,"message":{"role":"assistant","content":"hi"}}],"usage":{"prompt_tokens":10,"completion_tokens":1,"total_tokens":11}}`)
	}))
	defer srv.Close()
	job := Job{
		Config: Config{Goodput: 0.95, Max429Share: 0.05, MinRate: 16, MaxRate: 32, Factor: 2,
			StepDuration: testMinStep, Depth: 0, Repeats: 1, SLO: analyze.SLO{TTFT: time.Second}},
		Target: campaign.Target{Spec: client.Spec{URL: srv.URL + "/v1/chat/completions", KeyOptional: true, Timeout: 10 * time.Second,
			PromptTokens: 10, MaxTokens: 5}},
		OutDir: t.TempDir(), MaxInFlight: 16, RunID: "capacity-test", Group: "capacity",
	}
	if _, err := Run(context.Background(), job); !errors.Is(err, ErrUntimed) {
		t.Errorf("err %v; want ErrUntimed", err)
	}
}

// TestCapacityRefusesPromptsInProcess: a prompts file is the client's to
// send, which the in-process search does not use.
func TestCapacityRefusesPromptsInProcess(t *testing.T) {
	t.Parallel()
	c := Job{Config: Config{}, OutDir: t.TempDir(), Target: campaign.Target{Prompts: "p.jsonl"}}
	c.Config.Defaults()
	c.Config.Max429Share = 0.05
	if err := c.Validate(); err == nil {
		t.Error("--prompts on the embedded simulator validated")
	}
}

// instant answers every request 2xx at once, counting them.
type instant struct{ n atomic.Int64 }

func (s *instant) Send(_ context.Context, req dispatch.Request, record func(*results.Record)) {
	s.n.Add(1)
	r := req.First()
	r.Status, r.LatencyMS, r.TTFTMS, r.TPOTMS, r.ITLMaxMS = 200, 1, 1, results.None, results.None
	record(&r)
}

// TestWallStepSendsItsWholePlan: a step of more requests than dispatch's
// default cap (10,000) sends them all and judges its whole last half. The
// step is 12,000 requests in 200 ms (shorter than a search may ask for:
// the wall clock's wait is not the claim).
func TestWallStepSendsItsWholePlan(t *testing.T) {
	t.Parallel()
	job := Job{Config: Config{Goodput: 0.95, Max429Share: 0.05, StepDuration: 200 * time.Millisecond}, MaxInFlight: 64}
	s := &instant{}
	tl := NewTally(&job.Config, 60_000)
	if tl.Planned() != 12_000 {
		t.Fatalf("planned %d, want 12,000", tl.Planned())
	}
	if err := job.wallMeasure(s)(context.Background(), Probe{Rate: 60_000}, tl); err != nil {
		t.Fatal(err)
	}
	if st := tl.Step(Probe{Rate: 60_000}); s.n.Load() != 12_000 || st.Met != st.Judged || !st.Passed {
		t.Errorf("%d sent; step %+v", s.n.Load(), st)
	}
}

// TestProgressLines: a step's line and the start's announcement, as the
// command printed them when it put them in words itself.
func TestProgressLines(t *testing.T) {
	s := Step{Index: 4, Rate: 2.5, Repeat: 1, Goodput: 0.9712, Share429: 0.031, StoppedEarly: "TTFT rising"}
	if got, want := s.String(), "step 4: 2.500/s (run 2) → fail (stopped early: TTFT rising): goodput 97.1%, 429s 3.1%"; got != want {
		t.Errorf("step: %q, want %q", got, want)
	}
	s = Step{Index: 1, Rate: 0.5, Passed: true, Goodput: 1}
	if got, want := s.String(), "step 1: 0.500/s (run 1) → pass: goodput 100.0%, 429s 0.0%"; got != want {
		t.Errorf("step: %q, want %q", got, want)
	}
	j := Job{Config: Config{Goodput: 0.95, Max429Share: 0.05, MinRate: 4, MaxRate: 8, Factor: 2, StepDuration: time.Second, Repeats: 1},
		Target: campaign.Target{Spec: client.Spec{URL: "http://127.0.0.1:9/v1/chat/completions", PromptTokens: 10, MaxTokens: 5}}}
	if got, want := j.Announce(), "capacity: at most 2 steps of 1s (at most 12 requests, 180 tokens, 2s), on the wall clock against the named target"; got != want {
		t.Errorf("announcement: %q, want %q", got, want)
	}
}
