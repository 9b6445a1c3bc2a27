package client

import (
	"context"
	"net/http"
	"strconv"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/ptuprobe/ptuprobe/admission"
	"github.com/ptuprobe/ptuprobe/internal/memnet"
	"github.com/ptuprobe/ptuprobe/results"
)

// script answers the n-th request (1-based, counted per path) with the
// status and retry-after-ms of its entry, and 200 past the end; it notes
// every request's path and SDK retry header.
type script struct {
	mu      sync.Mutex
	answers map[string][]int // path → statuses; a 429 advises 100 ms
	seen    []string
	sdk     []string
}

func (s *script) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	n := 0
	for _, p := range s.seen {
		if p == r.URL.Path {
			n++
		}
	}
	s.seen = append(s.seen, r.URL.Path)
	s.sdk = append(s.sdk, r.Header.Get(admission.SDKRetryHeader))
	status := 200
	if as := s.answers[r.URL.Path]; n < len(as) {
		status = as[n]
	}
	s.mu.Unlock()
	if status == 429 {
		w.Header().Set("Retry-After-Ms", "100")
	}
	w.WriteHeader(status)
}

const (
	primaryPath  = "/openai/deployments/d/chat/completions"
	fallbackPath = "/openai/deployments/std/chat/completions"
)

// ownedSend sends one request through a client with the given owner (and
// client options) to s over an in-memory network, inside a synctest
// bubble, and returns the rows it recorded.
func ownedSend(t *testing.T, s *script, cfg Config, stopAfter time.Duration) []results.Record {
	t.Helper()
	return ownedSends(t, s, cfg, stopAfter, 1)
}

// ownedSends is ownedSend for n requests (seq 3, 4…) sent one after
// another through one client, and so one owner's shared state.
func ownedSends(t *testing.T, s *script, cfg Config, stopAfter time.Duration, n int) []results.Record {
	t.Helper()
	return sendWith(t, s, cfg, n, func(ctx context.Context) (context.Context, context.CancelFunc) {
		stop, cancel := context.WithCancel(ctx)
		if stopAfter > 0 {
			time.AfterFunc(stopAfter, cancel)
		}
		return stop, cancel
	})
}

// sendWith is ownedSends with the stop newStop makes in the bubble.
func sendWith(t *testing.T, s *script, cfg Config, n int, newStop func(context.Context) (context.Context, context.CancelFunc)) []results.Record {
	t.Helper()
	var rows []results.Record
	synctest.Test(t, func(t *testing.T) {
		ln := memnet.Listen()
		srv := &http.Server{Handler: s}
		go srv.Serve(ln)
		defer srv.Close()
		cfg.API, cfg.Endpoint, cfg.Deployment, cfg.PromptTokens, cfg.MaxTokens = APIAzure, "http://sim.invalid", "d", 10, 1
		cfg.DialContext = ln.DialContext
		tg, err := New(cfg)
		if err != nil {
			t.Fatal(err)
		}
		defer tg.Close()
		stop, cancel := newStop(t.Context())
		defer cancel()
		start := time.Now()
		for i := range n {
			first := results.Blank()
			first.Seq, first.Attempt, first.RunID = 3+i, 1, "r"
			first.IntendedMS, first.SentMS = ms(time.Since(start)), ms(time.Since(start))
			tg.Send(t.Context(), first, start, stop, func(r *results.Record) { rows = append(rows, *r) })
		}
	})
	return rows
}

func honour() *admission.Policy {
	return &admission.Policy{MaxAttempts: 3, Budget: 10 * time.Second}
}

// TestOwnerRecordsEveryAttempt: each attempt the owner makes is a row,
// numbered, with when it was meant to go and when it went, and the
// owner's decision after it.
func TestOwnerRecordsEveryAttempt(t *testing.T) {
	t.Parallel()
	s := &script{answers: map[string][]int{primaryPath: {429, 429}}}
	rows := ownedSend(t, s, Config{Owner: honour(), PolicyName: "honor"}, 0)
	want := []struct {
		status   int
		decision string
	}{{429, results.DecisionSleep}, {429, results.DecisionSleep}, {200, results.DecisionDone}}
	if len(rows) != len(want) {
		t.Fatalf("%d rows, want %d: %+v", len(rows), len(want), rows)
	}
	for i, w := range want {
		r := rows[i]
		if r.Attempt != i+1 || r.Status != w.status || r.Decision != w.decision || r.Policy != "honor" || r.Seq != 3 || r.RunID != "r" {
			t.Errorf("row %d: attempt %d status %d decision %q policy %q seq %d", i, r.Attempt, r.Status, r.Decision, r.Policy, r.Seq)
		}
		if i > 0 {
			prev := rows[i-1]
			// Sent exactly the advised 100 ms after the refusal was read.
			if r.IntendedMS != prev.SentMS+prev.LatencyMS+100 || r.SentMS != r.IntendedMS {
				t.Errorf("row %d: intended %v sent %v after a refusal done at %v", i, r.IntendedMS, r.SentMS, prev.SentMS+prev.LatencyMS)
			}
		}
	}
	if rows[0].WaitMS != 100 || rows[0].WaitSource != results.WaitRetryAfterMS {
		t.Errorf("the refusal's advice was not recorded: %+v", rows[0])
	}
}

func TestOwnerGiveUpRedirectAndStop(t *testing.T) {
	t.Parallel()
	t.Run("give up", func(t *testing.T) {
		t.Parallel()
		s := &script{answers: map[string][]int{primaryPath: {429, 429, 429}}}
		rows := ownedSend(t, s, Config{Owner: honour()}, 0)
		if len(rows) != 3 || rows[2].Decision != results.DecisionGiveUp || rows[2].Status != 429 || rows[2].Error != "" {
			t.Fatalf("%+v", rows)
		}
	})
	t.Run("redirect", func(t *testing.T) {
		t.Parallel()
		s := &script{answers: map[string][]int{primaryPath: {429}}}
		p := honour()
		p.RedirectFirst = true
		p.Fallback = func(r *http.Request) (*http.Request, error) {
			u := *r.URL
			u.Path = fallbackPath
			r.URL = &u
			return r, nil
		}
		rows := ownedSend(t, s, Config{Owner: p}, 0)
		if len(rows) != 2 || rows[0].Decision != results.DecisionRedirect || !rows[1].Fallback || rows[1].Status != 200 || rows[0].Fallback {
			t.Fatalf("%+v", rows)
		}
		if s.seen[1] != fallbackPath {
			t.Fatalf("the redirect went to %s", s.seen[1])
		}
	})
	t.Run("stop during the wait", func(t *testing.T) {
		t.Parallel()
		s := &script{answers: map[string][]int{primaryPath: {429}}}
		rows := ownedSend(t, s, Config{Owner: honour()}, 50*time.Millisecond)
		if len(s.seen) != 1 {
			t.Fatalf("a retry after the stop: %d requests", len(s.seen))
		}
		// The retry that the stop cut is the request's end: a row, not sent.
		if len(rows) != 2 || rows[0].Decision != results.DecisionSleep {
			t.Fatalf("%d rows, want the refusal and the retry cut: %+v", len(rows), rows)
		}
		wantNotSent(t, rows[1], 2, results.DecisionInterrupted, results.ClassCanceled)
		if want := rows[0].SentMS + rows[0].LatencyMS + 100; rows[1].IntendedMS != want {
			t.Errorf("the cut retry was meant for %v ms, want %v (its advised wait's end)", rows[1].IntendedMS, want)
		}
	})
}

// wantNotSent checks that r is an attempt its owner never sent: status 0,
// no send time, no latency, the decision and error class given.
func wantNotSent(t *testing.T, r results.Record, attempt int, decision, class string) {
	t.Helper()
	if !r.NotSent() || r.Attempt != attempt || r.Decision != decision || r.Error != class ||
		r.Status != 0 || r.SentMS != results.None || r.LatencyMS != results.None || r.TTFBMS != results.None {
		t.Errorf("want attempt %d not sent (%s, %s): %+v", attempt, decision, class, r)
	}
}

// TestOwnerRecordsRequestsNotSent: a request the owner gives up on before
// its first send (its shared cooldown or pace's hold does not fit the
// budget), or that a stop ends while it is held, still has its row, and
// nothing is sent after the stop. They once had none: the owner's
// decision was dropped, and a held request went out after Ctrl-C.
func TestOwnerRecordsRequestsNotSent(t *testing.T) {
	t.Parallel()
	pace := func(budget time.Duration) *admission.Policy {
		p, err := admission.NewPace(admission.DefaultPaceConfig())
		if err != nil {
			t.Fatal(err)
		}
		return &admission.Policy{MaxAttempts: 1, Budget: budget, Pace: p}
	}
	cooldown := func(budget time.Duration) *admission.Policy {
		return &admission.Policy{MaxAttempts: 1, Budget: budget, SharedCooldown: true}
	}
	for _, c := range []struct {
		name     string
		owner    *admission.Policy
		stop     time.Duration
		decision string
		class    string
	}{
		{"cooldown over the budget", cooldown(50 * time.Millisecond), 0, results.DecisionGiveUpLocal, results.ClassCooldown},
		{"pace over the budget", pace(50 * time.Millisecond), 0, results.DecisionGiveUpLocal, results.ClassPaced},
		{"stop in the cooldown's hold", cooldown(10 * time.Second), 50 * time.Millisecond, results.DecisionInterrupted, results.ClassCanceled},
		{"stop in the pace's hold", pace(10 * time.Second), 50 * time.Millisecond, results.DecisionInterrupted, results.ClassCanceled},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			// The first request's 429 advises 100 ms: the second is held
			// that long before it may go.
			s := &script{answers: map[string][]int{primaryPath: {429}}}
			rows := ownedSends(t, s, Config{Owner: c.owner, PolicyName: "p"}, c.stop, 2)
			if len(s.seen) != 1 {
				t.Errorf("%d requests reached the target, want the first alone", len(s.seen))
			}
			if len(rows) != 2 || rows[0].Seq != 3 || rows[0].Status != 429 || rows[1].Seq != 4 {
				t.Fatalf("%d rows, want one a request: %+v", len(rows), rows)
			}
			wantNotSent(t, rows[1], 1, c.decision, c.class)
			if rows[1].Policy != "p" || rows[1].IntendedMS != 0 {
				t.Errorf("the row not sent lost its request's fields: %+v", rows[1])
			}
		})
	}
}

// TestStackedOwnersAndSDKMarks: an application's loop of 3 calls around an
// owner of 2 attempts makes up to 6 attempts, numbered across the calls;
// with MarkSDKRetries the owner's retries carry their number.
func TestStackedOwnersAndSDKMarks(t *testing.T) {
	t.Parallel()
	s := &script{answers: map[string][]int{primaryPath: {429, 429, 429, 429, 429}}}
	p := &admission.Policy{MaxAttempts: 2, ReturnLastResponse: true}
	rows := ownedSend(t, s, Config{Owner: p, AppAttempts: 3, AppDelay: time.Second, MarkSDKRetries: true}, 0)
	if len(rows) != 6 {
		t.Fatalf("%d rows, want 6: %+v", len(rows), rows)
	}
	for i, r := range rows {
		if r.Attempt != i+1 {
			t.Errorf("row %d is attempt %d", i, r.Attempt)
		}
	}
	if rows[5].Status != 200 {
		t.Errorf("the sixth attempt: %+v", rows[5])
	}
	for i, v := range s.sdk {
		if want := strconv.Itoa(i % 2); v != want {
			t.Errorf("request %d carried %s %q, want %q", i, admission.SDKRetryHeader, v, want)
		}
	}
}

// TestStackedOwnersStopInTheAppDelay: a stop while the application's own
// loop waits to call again ends the request with a row not sent, the
// call that never went.
func TestStackedOwnersStopInTheAppDelay(t *testing.T) {
	t.Parallel()
	s := &script{answers: map[string][]int{primaryPath: {429, 429}}}
	p := &admission.Policy{MaxAttempts: 2, ReturnLastResponse: true}
	rows := ownedSend(t, s, Config{Owner: p, AppAttempts: 3, AppDelay: time.Second}, 500*time.Millisecond)
	if len(s.seen) != 2 || len(rows) != 3 {
		t.Fatalf("%d requests, %d rows; want 2 and 3: %+v", len(s.seen), len(rows), rows)
	}
	wantNotSent(t, rows[2], 3, results.DecisionInterrupted, results.ClassCanceled)
	if want := rows[1].SentMS + rows[1].LatencyMS + 1000; rows[2].IntendedMS != want {
		t.Errorf("the call cut was meant for %v ms, want %v", rows[2].IntendedMS, want)
	}
}

// TestNoAttemptPastTheCap: a stop with a deadline is the run's cap on the
// time spent sending (--max-duration): no attempt goes at or past it.
// A retry planned past it is given up at once, as it is decided, with a
// row not sent (give-up-local, timeout), as is an application's own
// call planned past it, and a request whose first attempt would leave
// after it (it waited for a worker). Under --max-duration 10s a retry
// once went out at 27.9 s.
func TestNoAttemptPastTheCap(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name    string
		answers []int
		cfg     Config
		cap     time.Duration // after the start; 0: already past
		sent    int           // requests the server sees
		rows    int
	}{
		// 429 at 0, retry at 100 ms (429), the next planned at 200 ms.
		{"a retry", []int{429, 429}, Config{Owner: honour(), PolicyName: "honor"}, 150 * time.Millisecond, 2, 3},
		// 429 twice (the owner's 2 attempts), the app's call 1 s later.
		{"an application's call", []int{429, 429}, Config{Owner: &admission.Policy{MaxAttempts: 2, ReturnLastResponse: true}, AppAttempts: 3, AppDelay: time.Second, PolicyName: "app"}, 500 * time.Millisecond, 2, 3},
		{"a first attempt, owned", nil, Config{Owner: honour(), PolicyName: "honor"}, 0, 0, 1},
		{"a first attempt, no owner", nil, Config{}, 0, 0, 1},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			s := &script{answers: map[string][]int{primaryPath: c.answers}}
			var returned time.Duration
			rows := sendWith(t, s, c.cfg, 1, func(ctx context.Context) (context.Context, context.CancelFunc) {
				start := time.Now()
				if c.cap == 0 {
					time.Sleep(time.Millisecond) // the request leaves past its cap
				}
				stop, cancel := context.WithDeadline(ctx, start.Add(c.cap))
				return stop, func() { returned = time.Since(start); cancel() }
			})
			if len(s.seen) != c.sent || len(rows) != c.rows {
				t.Fatalf("%d requests, %d rows; want %d and %d: %+v", len(s.seen), len(rows), c.sent, c.rows, rows)
			}
			last := rows[len(rows)-1]
			wantNotSent(t, last, c.rows, results.DecisionGiveUpLocal, results.ClassTimeout)
			if last.Policy != c.cfg.PolicyName || last.MaxTokens != 1 {
				t.Errorf("the row not sent lost its policy or max_tokens: %+v", last)
			}
			if c.rows > 1 {
				prev := rows[len(rows)-2]
				if last.IntendedMS < float64(c.cap/time.Millisecond) || last.IntendedMS <= prev.SentMS {
					t.Errorf("the attempt given up was planned at %v ms, want past the cap at %v and the attempt before it", last.IntendedMS, c.cap)
				}
				if returned >= c.cap {
					t.Errorf("the request returned %v after the start, want at once as its next attempt was planned past the cap at %v", returned, c.cap)
				}
			}
		})
	}
}
