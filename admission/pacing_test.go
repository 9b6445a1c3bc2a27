package admission

import (
	"context"
	"net/http"
	"strconv"
	"sync"
	"testing"
	"testing/synctest"
	"time"
)

// spacer admits one request per interval, a leaky bucket of depth one:
// a request that comes sooner is refused, advised the time until the next
// fits. It counts the retries that came back before the wait it advised
// to the same key (the simulator's witness, in miniature).
type spacer struct {
	interval time.Duration

	mu       sync.Mutex
	next     time.Time
	ready    map[string]time.Time // per key: when the last refusal said it fits
	admitted int
	refused  int
	early    int
}

func (s *spacer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	defer s.mu.Unlock()
	now, key := time.Now(), r.Header.Get("Key")
	if s.ready == nil {
		s.ready = map[string]time.Time{}
	}
	if at, ok := s.ready[key]; ok && now.Before(at) {
		s.early++
	}
	if now.Before(s.next) {
		s.refused++
		wait := s.next.Sub(now)
		s.ready[key] = now.Add(wait)
		w.Header().Set("Retry-After-Ms", strconv.FormatInt(int64((wait+time.Millisecond-1)/time.Millisecond), 10))
		w.WriteHeader(http.StatusTooManyRequests)
		return
	}
	delete(s.ready, key)
	s.admitted++
	s.next = now.Add(s.interval)
	w.WriteHeader(http.StatusOK)
}

// herd sends n requests at once, each from its own client (Transport) made
// by mk, and waits for them.
func herd(t *testing.T, next http.RoundTripper, n int, mk func(i int) Policy) {
	t.Helper()
	var wg sync.WaitGroup
	for i := range n {
		tr, err := New(next, mk(i))
		if err != nil {
			t.Fatal(err)
		}
		wg.Go(func() {
			req, _ := http.NewRequest(http.MethodGet, "http://primary.invalid/", nil)
			req.Header.Set("Key", strconv.Itoa(i))
			resp, err := tr.RoundTrip(req)
			if err == nil {
				resp.Body.Close()
			}
		})
	}
	wg.Wait()
}

// steady sends n requests through one Transport of policy p to h, one
// every gap (each with its own Key), and waits for them.
func steady(t *testing.T, h http.Handler, p Policy, n int, gap time.Duration) {
	t.Helper()
	tr, err := New(serveMem(t, h), p)
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			time.Sleep(time.Duration(i) * gap)
			req, _ := http.NewRequest(http.MethodGet, "http://primary.invalid/", nil)
			req.Header.Set("Key", strconv.Itoa(i))
			if resp, err := tr.RoundTrip(req); err == nil {
				resp.Body.Close()
			}
		})
	}
	wg.Wait()
}

// TestSlotsSpreadTheHerd: ten clients refused at once are all told the
// time the next single request fits. Honouring it exactly, they come back
// together and nine are refused again, round after round; with Slots,
// their retries go a slot apart and each is admitted on its first retry.
func TestSlotsSpreadTheHerd(t *testing.T) {
	t.Parallel()
	for _, slotted := range []bool{false, true} {
		synctest.Test(t, func(t *testing.T) {
			s := &spacer{interval: 100 * time.Millisecond}
			slots := NewSlots(100 * time.Millisecond)
			herd(t, serveMem(t, s), 10, func(int) Policy {
				p := DefaultPolicy()
				p.Jitter, p.MaxAttempts = 0, 20
				if slotted {
					p.Slots = slots
				}
				return p
			})
			if s.admitted != 10 || s.early != 0 {
				t.Fatalf("slots %v: %d admitted, %d early", slotted, s.admitted, s.early)
			}
			if slotted && s.refused != 9 {
				t.Errorf("with slots: %d refusals, want the 9 first ones only", s.refused)
			}
			if !slotted && s.refused < 30 {
				t.Errorf("without slots: %d refusals; the herd should be refused round after round", s.refused)
			}
		})
	}
}

// TestSlotsTake: a slot is never earlier than advised, and slots taken
// while earlier ones wait are width apart.
func TestSlotsTake(t *testing.T) {
	t.Parallel()
	s := NewSlots(0)
	if s.width != DefaultSlotWidth {
		t.Fatalf("width %v", s.width)
	}
	now := time.Unix(1000, 0)
	for i, want := range []time.Duration{50 * time.Millisecond, 150 * time.Millisecond, 250 * time.Millisecond} {
		if got := s.take(now, 50*time.Millisecond); got != want {
			t.Errorf("take %d: %v, want %v", i, got, want)
		}
	}
	if got := s.take(now.Add(time.Second), 5*time.Millisecond); got != 5*time.Millisecond {
		t.Errorf("a free slot: %v, want the advised 5ms", got)
	}
	if got := NewSlots(-1).take(now, time.Second); got != time.Second {
		t.Errorf("zero width: %v", got)
	}
}

// TestFloorAdviceWaitsTheLonger: FloorAdvice sleeps the longer of the
// advised wait and the backoff.
func TestFloorAdviceWaitsTheLonger(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		advised, backoff, want time.Duration
	}{
		{10 * time.Millisecond, time.Second, time.Second},
		{2 * time.Second, time.Second, 2 * time.Second},
	} {
		synctest.Test(t, func(t *testing.T) {
			var slept []time.Duration
			p := Policy{MaxAttempts: 2, Advice: FloorAdvice, Backoff: Constant(tt.backoff),
				Observe: func(d Decision) {
					if d.Action == ActionSleep {
						slept = append(slept, d.Slept)
					}
				}}
			tr, err := New(serveMem(t, refuseOnce(tt.advised)), p)
			if err != nil {
				t.Fatal(err)
			}
			resp, err := (&http.Client{Transport: tr}).Get("http://primary.invalid/")
			if err != nil || resp.StatusCode != 200 {
				t.Fatalf("%v %v", resp, err)
			}
			resp.Body.Close()
			if len(slept) != 1 || slept[0] != tt.want {
				t.Errorf("advised %v, backoff %v: slept %v, want %v", tt.advised, tt.backoff, slept, tt.want)
			}
		})
	}
}

// refuseOnce refuses the first request with the advised wait, then admits.
func refuseOnce(wait time.Duration) http.Handler {
	var once sync.Once
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		refused := false
		once.Do(func() { refused = true })
		if refused {
			w.Header().Set("Retry-After-Ms", strconv.FormatInt(wait.Milliseconds(), 10))
			w.WriteHeader(http.StatusTooManyRequests)
			return
		}
		w.WriteHeader(http.StatusOK)
	})
}

// honouring is the run TestPaceLearnsTheRate and
// TestAdaptiveLimitsTheRate compare with: 20 requests/s for 30 s to a
// deployment that admits 5/s, honouring the header alone; run once, in
// the first caller's synctest bubble.
func honouring(t *testing.T) *spacer {
	honourOnce.Do(func() {
		synctest.Test(t, func(t *testing.T) {
			s := &spacer{interval: 200 * time.Millisecond}
			p := DefaultPolicy()
			p.MaxAttempts, p.Budget = 20, 5*time.Second
			steady(t, s, p, 600, 50*time.Millisecond)
			honourRun = s
		})
	})
	if honourRun == nil {
		t.Fatal("the honouring run failed (in the test that ran it)")
	}
	return honourRun
}

var (
	honourOnce sync.Once
	honourRun  *spacer
)

// TestPaceLearnsTheRate: one client offers 20 requests/s for 30 s to a
// deployment that admits 5/s. Honouring the header alone, it collects a
// refusal for most of its attempts; paced, it learns a rate near 5/s,
// collects few refusals, gives up locally what cannot be sent within the
// budget, and never comes back before an advised wait.
func TestPaceLearnsTheRate(t *testing.T) {
	t.Parallel()
	honour := honouring(t)
	paced := &spacer{interval: 200 * time.Millisecond}
	var pace *Pace
	synctest.Test(t, func(t *testing.T) {
		var err error
		if pace, err = NewPace(DefaultPaceConfig()); err != nil {
			t.Fatal(err)
		}
		p := DefaultPolicy()
		p.MaxAttempts, p.Budget, p.Pace = 20, 5*time.Second, pace
		steady(t, paced, p, 600, 50*time.Millisecond)
	})
	t.Logf("honouring: %d admitted, %d refused; paced: %d admitted, %d refused, rate %.2f/s", honour.admitted, honour.refused, paced.admitted, paced.refused, pace.Rate())
	if paced.early != 0 {
		t.Errorf("paced: %d retries came back before their advised wait", paced.early)
	}
	if r := pace.Rate(); r < 2.5 || r > 10 {
		t.Errorf("paced: learned %.2f requests/s, want near the 5/s admitted", r)
	}
	hr := float64(honour.refused) / float64(honour.admitted)
	pr := float64(paced.refused) / float64(paced.admitted)
	if !(pr < 0.5 && pr < hr/4) {
		t.Errorf("refusals per admitted: paced %.2f (%d/%d), honouring %.2f (%d/%d): pacing should cut them by far",
			pr, paced.refused, paced.admitted, hr, honour.refused, honour.admitted)
	}
	if paced.admitted < honour.admitted*8/10 {
		t.Errorf("paced admitted %d, honouring %d: pacing should not waste the deployment", paced.admitted, honour.admitted)
	}
}

// TestPaceRule: the rate is cut once per congestion event, never below
// MinRate; sends are spaced 1/rate and held until the advised wait; a slot
// whose answer cannot come before the deadline is not taken.
func TestPaceRule(t *testing.T) {
	t.Parallel()
	p, err := NewPace(PaceConfig{Decrease: 0.5, Increase: 0.1, MinRate: 1})
	if err != nil {
		t.Fatal(err)
	}
	t0 := time.Unix(1000, 0)
	for i := range 10 { // 10 sends in one second: 10/s
		if _, ok := p.reserve(t0.Add(time.Duration(i)*100*time.Millisecond), time.Time{}); !ok {
			t.Fatal("an unpaced send was refused")
		}
	}
	if p.Rate() != 0 {
		t.Fatalf("paced before any refusal: %v", p.Rate())
	}
	now := t0.Add(time.Second)
	p.refusedAt(now, now.Add(-10*time.Millisecond), 300*time.Millisecond)
	if r := p.Rate(); r < 4.9 || r > 5.6 {
		t.Fatalf("first cut: %v, want half of about 10/s", r)
	}
	first := p.Rate()
	p.refusedAt(now.Add(time.Millisecond), now.Add(-5*time.Millisecond), 300*time.Millisecond)
	if p.Rate() != first {
		t.Fatalf("an answer to a send before the cut cut again: %v", p.Rate())
	}
	at, ok := p.reserve(now, time.Time{})
	if !ok || at != now.Add(301*time.Millisecond) {
		t.Fatalf("slot %v, want the advised wait's end", at.Sub(now))
	}
	at2, _ := p.reserve(now, time.Time{})
	if want := at.Add(time.Duration(float64(time.Second) / first)); at2 != want {
		t.Fatalf("next slot %v, want %v", at2.Sub(now), want.Sub(now))
	}
	if _, ok := p.reserve(now, at2); ok {
		t.Fatal("a slot past the deadline was taken")
	}
	for i := range 20 {
		p.refusedAt(now.Add(time.Hour+time.Duration(i)*time.Second), now.Add(time.Hour+time.Duration(i)*time.Second), 0)
	}
	if p.Rate() != 1 {
		t.Fatalf("rate %v, want the MinRate floor", p.Rate())
	}
	p.admitted(now.Add(time.Hour+30*time.Second), now.Add(time.Hour+29*time.Second))
	if r := p.Rate(); r <= 1 || r > 1+0.1*10+1e-9 {
		t.Fatalf("growth: %v, want at most 10 s of 10%%/s", r)
	}
	for _, bad := range []PaceConfig{{Decrease: 0, Increase: 0.1, MinRate: 1}, {Decrease: 1, Increase: 0.1, MinRate: 1},
		{Decrease: 0.5, Increase: 0, MinRate: 1}, {Decrease: 0.5, Increase: 2, MinRate: 1}, {Decrease: 0.5, Increase: 0.1, MinRate: 0},
		{Decrease: 0.5, Increase: 0.1, MinRate: 1, Utilization: -1}, {Decrease: 0.5, Increase: 0.1, MinRate: 1, Utilization: 101}} {
		if _, err := NewPace(bad); err == nil {
			t.Errorf("NewPace(%+v) accepted", bad)
		}
	}
}

// jumpClock is a Clock whose Sleep moves its time at once: a Transport on
// it waits no runtime time at all.
type jumpClock struct {
	mu  sync.Mutex
	now time.Time
}

func (c *jumpClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *jumpClock) Sleep(ctx context.Context, d time.Duration) error {
	c.mu.Lock()
	c.now = c.now.Add(max(d, 0))
	c.mu.Unlock()
	return ctx.Err()
}

// TestClockIsTheTransportsTime: with a Clock, every time a Transport
// reads and every wait it sleeps are that clock's.
func TestClockIsTheTransportsTime(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		clock := &jumpClock{now: time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC)}
		var attempts []Attempt
		p := Policy{MaxAttempts: 2, Budget: time.Hour, Clock: clock}
		tr, err := New(serveMem(t, refuseOnce(40*time.Minute)), p)
		if err != nil {
			t.Fatal(err)
		}
		start := time.Now()
		ctx := WithAttemptObserver(context.Background(), func(a Attempt) { attempts = append(attempts, a) })
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, "http://primary.invalid/", nil)
		resp, err := tr.RoundTrip(req)
		if err != nil || resp.StatusCode != 200 {
			t.Fatalf("%v %v", resp, err)
		}
		resp.Body.Close()
		if time.Since(start) != 0 {
			t.Errorf("the runtime clock moved %v", time.Since(start))
		}
		if len(attempts) != 2 || attempts[1].Sent.Sub(attempts[0].Sent) != 40*time.Minute || attempts[0].Sent.Year() != 2030 {
			t.Fatalf("attempts on the clock: %+v", attempts)
		}
	})
}
