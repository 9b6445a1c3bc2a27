package redisstate

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/ptuprobe/ptuprobe/admission"
	"github.com/ptuprobe/ptuprobe/internal/redisserver"
	"github.com/ptuprobe/ptuprobe/internal/testkit"
)

// heard is the CallTimeout of a test whose Redis must be heard: one about
// the shared state, or about what a server answers (a refused password,
// a hostile or far-ahead reply), not about a Redis that is slow. A loaded
// machine under -race misses the default 50 ms on loopback, and a call
// that times out falls back to the process's own state
// (TestPaceSharedThroughRedis saw the second owner send within the
// first's hold) or says only that nothing answered (round 15:
// TestAnswersFarAheadAreFaults's fake answered past 50 ms at load 9).
const heard = 5 * time.Second

// open returns a Coordinator on srv for deployment, closed at the end.
func open(t *testing.T, srv *redisserver.Server, o Options) *Coordinator {
	t.Helper()
	return openAddr(t, srv.Addr, o)
}

// openAddr is open on the Redis (or holder) at addr.
func openAddr(t *testing.T, addr string, o Options) *Coordinator {
	t.Helper()
	c, err := Open("redis://"+addr+"/0", "", o)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

// TestSharedStateAndKeys: two Coordinators, as two processes, share a
// deployment's cooldown and slots and not another deployment's; every key
// is namespaced, expires, and holds no name.
func TestSharedStateAndKeys(t *testing.T) {
	t.Parallel()
	srv := redisserver.Start(t)
	ctx := context.Background()
	const name = "https://contoso.openai.azure.com/gpt-4o-ptu"
	a, b := open(t, srv, Options{Deployment: name, CallTimeout: heard}), open(t, srv, Options{Deployment: name, CallTimeout: heard})
	other := open(t, srv, Options{Deployment: "another", CallTimeout: heard})

	now := time.Now().Truncate(time.Microsecond)
	end := now.Add(3 * time.Second)
	if got, src, err := a.Cooldown(ctx, end, "retry-after-ms"); err != nil || !got.Equal(end) || src != "retry-after-ms" {
		t.Fatalf("extend: %v %q %v", got, src, err)
	}
	if got, src, err := b.Cooldown(ctx, now.Add(time.Second), "retry-after"); err != nil || !got.Equal(end) || src != "retry-after-ms" {
		t.Fatalf("an earlier end through the other: %v %q %v; want the later end kept", got, src, err)
	}
	if got, _, err := other.Cooldown(ctx, time.Time{}, ""); err != nil || !got.IsZero() {
		t.Fatalf("another deployment's cooldown: %v %v; want none", got, err)
	}
	for i, c := range []*Coordinator{a, b, a} {
		got, err := c.Slot(ctx, now, 100*time.Millisecond)
		if want := now.Add(time.Duration(i) * 100 * time.Millisecond); err != nil || !got.Equal(want) {
			t.Fatalf("slot %d: %v %v, want %v", i, got, err, want)
		}
	}
	if _, err := a.Pace(ctx, admission.PaceStep{Op: admission.PaceReserve, Now: now, Config: admission.DefaultPaceConfig()}); err != nil {
		t.Fatal(err)
	}

	rc := redis.NewClient(&redis.Options{Addr: srv.Addr})
	defer rc.Close()
	keys, err := rc.Keys(ctx, "*").Result()
	if err != nil {
		t.Fatal(err)
	}
	if len(keys) != 3 {
		t.Errorf("keys %q, want one deployment's cooldown, slots and pace (the other's was only read)", keys)
	}
	for _, k := range keys {
		if !strings.HasPrefix(k, "ptuprobe:{") || strings.Contains(k, "contoso") || strings.Contains(k, "gpt") {
			t.Errorf("key %q: not namespaced, or it names the deployment", k)
		}
		if ttl := rc.PTTL(ctx, k).Val(); ttl <= 0 {
			t.Errorf("key %q does not expire (PTTL %v)", k, ttl)
		}
		if typ := rc.Type(ctx, k).Val(); typ == "hash" {
			for f, v := range rc.HGetAll(ctx, k).Val() {
				if strings.Contains(v, "contoso") {
					t.Errorf("key %q field %s holds the name", k, f)
				}
			}
		}
	}
	if a.Fallbacks()+b.Fallbacks() != 0 {
		t.Errorf("%d fallbacks with Redis up", a.Fallbacks()+b.Fallbacks())
	}
}

// TestPaceSteps: the pace script keeps admission's AIMD for the fleet: no
// pacing before a refusal; a refusal cuts to Decrease × the fleet's
// recent rate and holds sends until the advised wait's end; a slot taken
// before the cut is void; a refusal of an attempt sent before the cut
// does not cut again; admitted answers grow the rate; a slot that would
// not be answered before the deadline is not taken.
func TestPaceSteps(t *testing.T) {
	t.Parallel()
	srv := redisserver.Start(t)
	ctx := context.Background()
	a, b := open(t, srv, Options{Deployment: "d", CallTimeout: heard}), open(t, srv, Options{Deployment: "d", CallTimeout: heard})
	cfg := admission.DefaultPaceConfig()
	step := func(c *Coordinator, s admission.PaceStep) admission.PaceResult {
		t.Helper()
		s.Config = cfg
		r, err := c.Pace(ctx, s)
		if err != nil {
			t.Fatal(err)
		}
		return r
	}
	t0 := time.UnixMicro(1_800_000_000_000_000)
	ms := func(n int) time.Time { return t0.Add(time.Duration(n) * time.Millisecond) }
	// Ten sends 100 ms apart, from both: 10/s, the fleet's rate, unpaced.
	var old admission.PaceResult
	for i := range 10 {
		c := []*Coordinator{a, b}[i%2]
		r := step(c, admission.PaceStep{Op: admission.PaceReserve, Now: ms(100 * i)})
		if !r.OK || !r.At.Equal(ms(100*i)) {
			t.Fatalf("unpaced reserve %d: %+v", i, r)
		}
		old = r
	}
	// Refused at 1 s advising 200 ms: 10 sends over 1 s... rate 10/s ×
	// 0.75 = 7.5/s; nothing before 1.2 s.
	step(a, admission.PaceStep{Op: admission.PaceRefused, Now: ms(1000), Sent: ms(900), Wait: 200 * time.Millisecond})
	if r := step(b, admission.PaceStep{Op: admission.PaceConfirm, Gen: old.Gen, At: old.At}); r.OK {
		t.Errorf("a slot taken before the cut was confirmed: %+v", r)
	}
	r1 := step(b, admission.PaceStep{Op: admission.PaceReserve, Now: ms(1000)})
	r2 := step(a, admission.PaceStep{Op: admission.PaceReserve, Now: ms(1000)})
	if !r1.OK || !r1.At.Equal(ms(1200)) || r1.Gen != old.Gen+1 {
		t.Errorf("after the cut: %+v, want the slot at the hold's end, 1.2 s, under the next gen", r1)
	}
	if gap := r2.At.Sub(r1.At); gap != 133333*time.Microsecond {
		t.Errorf("slots %v apart, want 1/7.5 s", gap)
	}
	if !step(b, admission.PaceStep{Op: admission.PaceConfirm, Gen: r1.Gen, At: r1.At}).OK {
		t.Error("a slot taken after the cut was not confirmed")
	}
	// An answer to what was sent before the cut does not cut again.
	step(b, admission.PaceStep{Op: admission.PaceRefused, Now: ms(1100), Sent: ms(950), Wait: -1})
	r3 := step(a, admission.PaceStep{Op: admission.PaceReserve, Now: ms(1000)})
	if r3.Gen != r1.Gen || r3.At.Sub(r2.At) != 133333*time.Microsecond {
		t.Errorf("after a late refusal: %+v, want no second cut", r3)
	}
	// Admitted 10 s after the cut: +2%/s × 10 s, so 1/(7.5 × 1.2) apart.
	step(a, admission.PaceStep{Op: admission.PaceAdmitted, Now: ms(11000), Sent: ms(10900)})
	r4 := step(b, admission.PaceStep{Op: admission.PaceReserve, Now: ms(20000)})
	r5 := step(b, admission.PaceStep{Op: admission.PaceReserve, Now: ms(20000)})
	if gap := r5.At.Sub(r4.At); gap != 111111*time.Microsecond {
		t.Errorf("after growth, slots %v apart, want 1/9 s", gap)
	}
	// A slot whose answer would come after the deadline is not taken.
	r6 := step(a, admission.PaceStep{Op: admission.PaceReserve, Now: ms(20000), Deadline: ms(20300), Margin: 100 * time.Millisecond})
	if r6.OK || !r6.At.Equal(r5.At.Add(111111*time.Microsecond)) {
		t.Errorf("a slot past the deadline: %+v, want refused at the next slot", r6)
	}
}

// TestOpenRefuses: a URL Open cannot use is ErrURL; a refused password is
// ErrAuth at Check; a password never appears in an error.
func TestOpenRefuses(t *testing.T) {
	t.Parallel()
	for _, u := range []string{"http://127.0.0.1:6379", "redis://127.0.0.1:6379/x", "redis://:hunter2@127.0.0.1:6379/0", "127.0.0.1:6379", "redis://[::1/0", "redis://:hunter2@[::1/0"} {
		_, err := Open(u, "", Options{Deployment: "d"})
		if !errors.Is(err, ErrURL) || strings.Contains(err.Error(), "hunter2") {
			t.Errorf("Open(%q): %v, want ErrURL without the password", u, err)
		}
	}
	tlsC, err := Open("rediss://127.0.0.1:6380/2", "", Options{Deployment: "d"})
	if err != nil {
		t.Errorf("rediss://: %v", err)
	} else {
		tlsC.Close()
	}
	srv := redisserver.Start(t, "--requirepass", "right-one")
	for _, pw := range []string{"", "wrong-one"} {
		c, err := Open("redis://"+srv.Addr+"/0", pw, Options{Deployment: "d", CallTimeout: heard})
		if err != nil {
			t.Fatal(err)
		}
		err = c.Check(context.Background())
		if !errors.Is(err, ErrAuth) || strings.Contains(err.Error(), "wrong-one") {
			t.Errorf("password %q: %v, want ErrAuth without the password", pw, err)
		}
		c.Close()
	}
	c, err := Open("redis://"+srv.Addr+"/0", "right-one", Options{Deployment: "d", CallTimeout: heard})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if err := c.Check(context.Background()); err != nil {
		t.Errorf("the right password: %v", err)
	}
}

// TestFaultsFallBackAndRejoin: Redis slow (held), killed and
// restarted under a Coordinator: each call ends by its deadline, is
// counted, warns once per outage, is not retried within Retry, and Redis
// is used again once it answers.
func TestFaultsFallBackAndRejoin(t *testing.T) {
	t.Parallel()
	srv := redisserver.Start(t)
	ctx := context.Background()
	var now atomic.Int64
	now.Store(time.Now().UnixNano())
	var warnings []error
	var mu sync.Mutex
	// The calls to a Redis that answers must be heard (the default 50 ms
	// was missed under load); the held one waits out its deadline, its
	// context's 50 ms, whose end is the outcome (a shorter wait can only
	// end the same way; CallTimeout's own bound on a held call is
	// TestSlowRedisDoesNotHoldRequests').
	h := hold(t, srv.Addr)
	c := openAddr(t, h.Addr, Options{Deployment: "d", Now: func() time.Time { return time.Unix(0, now.Load()) }, CallTimeout: time.Second,
		Warn: func(err error) { mu.Lock(); warnings = append(warnings, err); mu.Unlock() }})
	read := func(ctx context.Context) error {
		_, _, err := c.Cooldown(ctx, time.Time{}, "")
		return err
	}
	if err := read(ctx); err != nil {
		t.Fatal(err)
	}

	// Slow: Redis held; the call ends at its deadline, while it holds.
	h.Hold()
	held, cancel := context.WithTimeout(ctx, 50*time.Millisecond)
	err := read(held)
	cancel()
	if err == nil {
		t.Fatal("a call to a held Redis: no error; want one at its deadline")
	}
	if err := read(ctx); !errors.Is(err, errSkipped) {
		t.Errorf("within Retry of a failure: %v, want no call (errSkipped)", err)
	}
	h.Release()
	now.Add(int64(2 * DefaultRetry))
	if err := read(ctx); err != nil {
		t.Fatalf("Redis answers again: %v", err)
	}

	// Lost: killed, then restarted on the same port.
	srv.Stop()
	now.Add(int64(2 * DefaultRetry))
	if err := read(ctx); err == nil {
		t.Fatal("a call to a killed Redis succeeded")
	}
	now.Add(int64(2 * DefaultRetry))
	if err := read(ctx); err == nil {
		t.Fatal("a call to a killed Redis succeeded")
	}
	srv.Restart()
	now.Add(int64(2 * DefaultRetry))
	if err := read(ctx); err != nil {
		t.Fatalf("after the restart: %v", err)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(warnings) != 2 {
		t.Errorf("warnings %v, want one per outage (slow, then killed)", warnings)
	}
	if got := c.Fallbacks(); got != 4 {
		t.Errorf("%d fallbacks, want 4 (the slow call, the skipped one, two while killed)", got)
	}
}

// TestTransportsShareThroughRedis: two admission Transports (two
// processes) with a shared cooldown through Redis: one refusal advising
// 300 ms holds the other's requests, sent while the first waits it out.
// Then Redis is killed: every request still completes within its budget,
// on the process's own state.
func TestTransportsShareThroughRedis(t *testing.T) {
	t.Parallel()
	srv := redisserver.Start(t)
	var refusals, admitted atomic.Int64
	refused := make(chan struct{})
	// Closed for 300 ms from the first request, whenever a loaded
	// machine sends it (from the test's start, a late first request was
	// admitted, and nothing was shared).
	var mu sync.Mutex
	var open0 time.Time
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		if open0.IsZero() {
			open0 = time.Now().Add(300 * time.Millisecond)
		}
		left := time.Until(open0)
		mu.Unlock()
		if left > 0 {
			if refusals.Add(1) == 1 {
				close(refused)
			}
			w.Header().Set("Retry-After-Ms", strconv.FormatInt(left.Milliseconds()+1, 10))
			w.WriteHeader(http.StatusTooManyRequests)
			return
		}
		admitted.Add(1)
	}))
	defer ts.Close()
	var owners [2]*http.Client
	var coords [2]*Coordinator
	for i := range owners {
		coords[i] = open(t, srv, Options{Deployment: ts.URL, CallTimeout: heard})
		p := admission.DefaultPolicy()
		p.SharedCooldown, p.Jitter, p.Budget, p.Coordinator = true, 0, 5*time.Second, coords[i]
		tr, err := admission.New(nil, p)
		if err != nil {
			t.Fatal(err)
		}
		owners[i] = &http.Client{Transport: tr}
	}
	// A request that does not complete within its budget (5 s) is an
	// error: the owner gives up.
	get := func(c *http.Client) {
		resp, err := c.Get(ts.URL)
		if err != nil {
			t.Error(err)
			return
		}
		resp.Body.Close()
	}
	// The second sends once the first's refusal is in Redis, while the
	// first waits it out: held, it is not refused. (A second sent after
	// the window, late on a loaded machine, is admitted all the same.)
	first := make(chan struct{})
	go func() { defer close(first); get(owners[0]) }()
	<-refused
	for begun := time.Now(); ; {
		end, _, err := coords[1].Cooldown(context.Background(), time.Time{}, "")
		if err == nil && !end.IsZero() {
			break
		}
		if time.Since(begun) > heard {
			t.Fatalf("the refusal's cooldown not in Redis after %v: %v", heard, err)
		}
		time.Sleep(time.Millisecond)
	}
	for range 3 {
		get(owners[1])
	}
	<-first
	if refusals.Load() != 1 || admitted.Load() != 4 {
		t.Errorf("through Redis: %d refusals, %d admitted; want the one refusal", refusals.Load(), admitted.Load())
	}
	srv.Stop()
	for _, c := range owners {
		get(c) // within its budget, on the process's own state
	}
	if coords[0].Fallbacks() == 0 || coords[1].Fallbacks() == 0 {
		t.Errorf("fallbacks %d and %d, want some once Redis is gone", coords[0].Fallbacks(), coords[1].Fallbacks())
	}
}

// TestSlowRedisDoesNotHoldRequests: with Redis held (holder),
// requests through a coordinated Transport are answered without waiting
// for it: each decision gives up on Redis at its 50 ms deadline.
func TestSlowRedisDoesNotHoldRequests(t *testing.T) {
	t.Parallel()
	srv := redisserver.Start(t)
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {}))
	defer ts.Close()
	h := hold(t, srv.Addr)
	c := openAddr(t, h.Addr, Options{Deployment: ts.URL})
	pace, err := admission.NewPace(admission.DefaultPaceConfig())
	if err != nil {
		t.Fatal(err)
	}
	p := admission.DefaultPolicy()
	p.SharedCooldown, p.Slots, p.Pace, p.Coordinator = true, admission.NewSlots(0), pace, c
	tr, err := admission.New(nil, p)
	if err != nil {
		t.Fatal(err)
	}
	// Held until the test's end: the requests are answered while it holds
	// (had they waited for Redis, the test would hang to go test's -timeout).
	h.Hold()
	for range 5 {
		resp, err := (&http.Client{Transport: tr}).Get(ts.URL)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
	}
	if c.Fallbacks() == 0 {
		t.Error("no fallback counted while Redis was held")
	}
}

// TestPaceSharedThroughRedis: two Transports, as two processes, each with
// a Pace of its own: a refusal met by the first paces the second, which
// has met none, at the rate they share in Redis. The first sends 8
// requests at least 10 ms apart, the 8th refused with a 100 ms wait: the
// rate it was sending at is at most 8 in 70 ms, cut to 3/4 of that, so
// the shared slots are at least 11.6 ms apart, after the shared hold.
func TestPaceSharedThroughRedis(t *testing.T) {
	t.Parallel()
	srv := redisserver.Start(t)
	var mu sync.Mutex
	var n int
	var refusedAt time.Time
	var arrivals []time.Time
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		defer mu.Unlock()
		n++
		switch {
		case n == 8:
			refusedAt = time.Now()
			w.Header().Set("Retry-After-Ms", "100")
			w.WriteHeader(http.StatusTooManyRequests)
		case n > 8:
			arrivals = append(arrivals, time.Now())
		}
	}))
	defer ts.Close()
	var owners [2]*http.Client
	for i := range owners {
		pace, err := admission.NewPace(admission.DefaultPaceConfig())
		if err != nil {
			t.Fatal(err)
		}
		p := admission.DefaultPolicy()
		p.Pace, p.Coordinator, p.MaxAttempts = pace, open(t, srv, Options{Deployment: ts.URL, CallTimeout: heard}), 1
		tr, err := admission.New(nil, p)
		if err != nil {
			t.Fatal(err)
		}
		owners[i] = &http.Client{Transport: tr}
	}
	get := func(c *http.Client) {
		resp, err := c.Get(ts.URL)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
	}
	for range 7 {
		get(owners[0])
		time.Sleep(10 * time.Millisecond)
	}
	// The 8th is refused, and with one attempt given up: the shared rate
	// is cut.
	if resp, err := owners[0].Get(ts.URL); err == nil {
		resp.Body.Close()
		t.Fatal("the 8th request was not refused")
	}
	for range 3 {
		get(owners[1])
	}
	mu.Lock()
	defer mu.Unlock()
	if len(arrivals) != 3 {
		t.Fatalf("%d requests from the second owner arrived, want 3", len(arrivals))
	}
	if held := arrivals[0].Sub(refusedAt); held < 90*time.Millisecond {
		t.Errorf("the second owner sent %v after the refusal advising 100 ms", held)
	}
	// Slots are reserved from the hold on, 1/rate apart; a send delayed
	// past its slot makes the gap after it shorter, never the span.
	if span := arrivals[2].Sub(refusedAt); span < 120*time.Millisecond {
		t.Errorf("the second owner's third send came %v after the refusal; want the 100 ms hold and two paced slots (>= 123 ms)", span)
	}
}

// TestRedisKilledMidRun: a fleet's Transport (cooldown, slots and pace
// through Redis) sends 48 requests from 8 goroutines to a target that
// refuses every third, advising 30 ms; Redis is killed after the 16th
// completes and restarted after the 32nd. Every request completes its
// course within its budget (and a call's deadline, and the stalls of a
// loaded machine: testkit.Stalls), each with its
// decisions observed, and the decisions taken while Redis was gone are
// counted as fallbacks.
func TestRedisKilledMidRun(t *testing.T) {
	t.Parallel()
	srv := redisserver.Start(t)
	var n atomic.Int64
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if n.Add(1)%3 == 0 {
			w.Header().Set("Retry-After-Ms", "30")
			w.WriteHeader(http.StatusTooManyRequests)
		}
	}))
	defer ts.Close()
	c := open(t, srv, Options{Deployment: ts.URL})
	pace, err := admission.NewPace(admission.DefaultPaceConfig())
	if err != nil {
		t.Fatal(err)
	}
	const budget = 250 * time.Millisecond
	p := admission.DefaultPolicy()
	p.SharedCooldown, p.Slots, p.Pace, p.Coordinator, p.Budget = true, admission.NewSlots(10*time.Millisecond), pace, c, budget
	tr, err := admission.New(nil, p)
	if err != nil {
		t.Fatal(err)
	}
	const requests, workers = 48, 8
	stalls := testkit.WatchStalls(t)
	var done, observed atomic.Int64
	stopped := make(chan struct{})
	var wg sync.WaitGroup
	var mu sync.Mutex
	var late []time.Duration
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range requests / workers {
				var seen bool
				ctx := admission.WithAttemptObserver(context.Background(), func(admission.Attempt) { seen = true })
				req, _ := http.NewRequestWithContext(ctx, http.MethodGet, ts.URL, nil)
				start := time.Now()
				resp, err := tr.RoundTrip(req)
				took := time.Since(start)
				var gaveUp *admission.GiveUpError
				switch {
				case err == nil:
					resp.Body.Close()
				case !errors.As(err, &gaveUp):
					t.Errorf("worker %d: %v", w, err)
				}
				if seen {
					observed.Add(1)
				}
				// Its bound is its budget and a call's deadline, and the
				// time this process could not run during it (a loaded
				// machine's stalls wake no timer on time).
				if took > budget+DefaultCallTimeout+200*time.Millisecond+stalls.Total(start, start.Add(took)) {
					mu.Lock()
					late = append(late, took)
					mu.Unlock()
				}
				// The 16th request's worker kills Redis and the 32nd's
				// starts it again, after the kill has finished: two
				// workers, so the restart waits on the kill's channel (the
				// counter orders the counts, not the kill's end; under
				// -race a restart while Stop still waited was a race on
				// the server's process).
				switch done.Add(1) {
				case 16:
					srv.Stop()
					close(stopped)
				case 32:
					<-stopped
					srv.Restart()
				}
			}
		}()
	}
	wg.Wait()
	if len(late) > 0 || observed.Load() != requests {
		t.Errorf("%d requests past their budget (%v), %d of %d with their decisions observed", len(late), late, observed.Load(), requests)
	}
	if c.Fallbacks() == 0 {
		t.Error("no fallback counted with Redis killed mid-run")
	}
}
