package redisstate

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"strconv"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/ptuprobe/ptuprobe/admission"
	"github.com/ptuprobe/ptuprobe/internal/redisserver"
)

// call is one call of a Coordinator, as a Transport makes it.
type call struct {
	what   string    // "cooldown", "slot" or "pace"
	when   time.Time // the caller's time
	until  time.Time
	source string
	at     time.Time
	width  time.Duration
	pace   admission.PaceStep
}

// answer is what a Coordinator returned for a call.
type answer struct {
	end    time.Time
	source string
	slot   time.Time
	pace   admission.PaceResult
	err    error
}

// us is t in microseconds since the Unix epoch, with its nanoseconds
// when it has any (a time Redis cannot keep).
func us(t time.Time) string {
	if ns := t.Nanosecond() % 1000; ns != 0 && !t.IsZero() {
		return fmt.Sprintf("%d.%03d", micros(t), ns)
	}
	return strconv.FormatInt(micros(t), 10)
}

func (c call) String() string {
	switch c.what {
	case "cooldown":
		return fmt.Sprintf("Cooldown(until %s, %q)", us(c.until), c.source)
	case "slot":
		return fmt.Sprintf("Slot(at %s, width %v)", us(c.at), c.width)
	}
	s := c.pace
	return fmt.Sprintf("Pace(op %d, now %s, sent %s, wait %v, deadline %s, margin %v, gen %d, at %s)",
		s.Op, us(s.Now), us(s.Sent), s.Wait, us(s.Deadline), s.Margin, s.Gen, us(s.At))
}

func (a answer) String() string {
	return fmt.Sprintf("{end %s %q, slot %s, pace at %s gen %d ok %v, err %v}",
		us(a.end), a.source, us(a.slot), us(a.pace.At), a.pace.Gen, a.pace.OK, a.err)
}

func (c call) on(ctx context.Context, co admission.Coordinator) (a answer) {
	switch c.what {
	case "cooldown":
		a.end, a.source, a.err = co.Cooldown(ctx, c.until, c.source)
	case "slot":
		a.slot, a.err = co.Slot(ctx, c.at, c.width)
	default:
		a.pace, a.err = co.Pace(ctx, c.pace)
	}
	return a
}

// same reports whether Redis answered c as the memory store did, to the
// microsecond. The steps' times are whole microseconds, which is what
// Redis keeps, so every answer is exact; the one difference allowed is
// that Redis forgets a cooldown a second (wall time) after its end and
// the memory store does not: an ended cooldown read as none.
func same(c call, mem, red answer) bool {
	if mem.err != nil || red.err != nil {
		return false
	}
	if c.what == "cooldown" && red.end.IsZero() && red.source == "" && !mem.end.After(c.when) {
		return true
	}
	return mem.end.Equal(red.end) && mem.source == red.source && mem.slot.Equal(red.slot) &&
		mem.pace.At.Equal(red.pace.At) && mem.pace.Gen == red.pace.Gen && mem.pace.OK == red.pace.OK
}

// timeline makes calls as a fleet's Transports would, from a seeded
// generator, on a synthetic timeline in whole microseconds: time moves 0
// to 20 ms a call, one call in 50 up to 30 s (an idle spell), and one
// call in ten is made at a time up to 5 ms earlier (a process whose
// clock lags, or whose step came late). Nothing is refused for the first
// calm calls, so the first cut meets from one to many sends. Its pace
// steps reuse what the reference answered: confirms of the slots it
// granted, refusals and admissions of what went in them.
type timeline struct {
	rng     *rand.Rand
	start   time.Time
	now     time.Time
	calm    int // calls before the first refusal
	calls   int
	cfg     admission.PaceConfig
	coolEnd time.Time              // the cooldown's end, as last answered
	slots   []admission.PaceResult // granted and not yet confirmed
	sent    []admission.PaceResult // slots confirmed: the attempts sent
	seen    map[string]int         // what the answers exercised, over sequences
	// granted and cuts are seen's when this sequence began.
	granted, cuts int
	gen           uint64    // the count of cuts, as last probed
	cutAt         time.Time // the last cut's time
}

func (g *timeline) dur(max time.Duration) time.Duration {
	return time.Duration(g.rng.Int64N(max.Microseconds()+1)) * time.Microsecond
}

// next is the next call.
func (g *timeline) next() call {
	g.calls++
	step := 20 * time.Millisecond
	if g.rng.IntN(50) == 0 {
		step = 30 * time.Second
	}
	g.now = g.now.Add(g.dur(step))
	when := g.now
	if g.rng.IntN(10) == 0 {
		when = when.Add(-g.dur(5 * time.Millisecond))
	}
	switch r := g.rng.IntN(100); {
	case r < 15:
		c := call{what: "cooldown", when: when}
		switch g.rng.IntN(6) {
		case 0, 1, 2:
		case 3: // told the end the cooldown has, by another dialect
			c.until = g.coolEnd
		default:
			c.until = when.Add(g.dur(2 * time.Second))
		}
		if !c.until.IsZero() {
			c.source = []string{"retry-after-ms", "retry-after", "x-ratelimit-reset-requests"}[g.rng.IntN(3)]
		}
		return c
	case r < 30:
		width := []time.Duration{0, 100 * time.Millisecond, g.dur(50 * time.Millisecond)}[g.rng.IntN(3)]
		return call{what: "slot", when: when, at: when.Add(g.dur(300 * time.Millisecond)), width: width}
	}
	s := admission.PaceStep{Now: when, Config: g.cfg}
	switch r := g.rng.IntN(100); {
	case r < 40:
		s.Op = admission.PaceReserve
		if g.rng.IntN(4) > 0 {
			s.Deadline = when.Add(g.dur(5 * time.Second))
		}
		s.Margin = g.dur(300 * time.Millisecond)
	case r < 60:
		s.Op = admission.PaceConfirm
		if len(g.slots) == 0 {
			s.Gen = uint64(g.rng.IntN(3))
			s.At = when
			break
		}
		i := g.rng.IntN(len(g.slots))
		s.Gen, s.At = g.slots[i].Gen, g.slots[i].At
		g.slots = append(g.slots[:i], g.slots[i+1:]...)
	case r < 88 || g.calls <= g.calm:
		s.Op, s.Sent = admission.PaceAdmitted, g.sentAt(when).At
	default:
		sent := g.sentAt(when)
		s.Op, s.Sent, s.Gen = admission.PaceRefused, sent.At, sent.Gen
		if g.rng.IntN(8) == 0 {
			s.Gen++ // a slot of another state: the fallback's
		}
		switch g.rng.IntN(3) {
		case 0:
			s.Wait = -1
		case 1:
			s.Wait = g.dur(time.Second)
		}
	}
	return call{what: "pace", when: when, pace: s}
}

// probe is a reserve that reads the pace's state and takes nothing: at
// the timeline's start, with that as its deadline, it is refused, and
// answers the later of the hold and (once paced) the next slot, and the
// count of cuts.
func (g *timeline) probe() call {
	return call{what: "pace", when: g.start, pace: admission.PaceStep{Op: admission.PaceReserve, Now: g.start, Deadline: g.start, Config: g.cfg}}
}

// sentAt is the slot (the time and the count of cuts it was taken
// under) of an attempt answered at when: half the time the last send,
// else one of the last 64, or (with none) up to half a second before.
func (g *timeline) sentAt(when time.Time) admission.PaceResult {
	if len(g.sent) == 0 {
		return admission.PaceResult{At: when.Add(-g.dur(500 * time.Millisecond))}
	}
	if g.rng.IntN(2) == 0 {
		return g.sent[len(g.sent)-1]
	}
	return g.sent[g.rng.IntN(len(g.sent))]
}

// learn keeps what the reference answered c, for the calls to come, and
// counts what it exercised.
func (g *timeline) learn(c call, a answer) {
	if c.what == "cooldown" {
		g.coolEnd = a.end
	}
	switch {
	case c.what == "cooldown" && !c.until.IsZero() && a.end.Equal(c.until):
		g.seen["cooldown extended"]++
	case c.what == "slot" && a.slot.After(c.at):
		g.seen["slot later than asked"]++
	case c.what != "pace":
	case c.pace.Op == admission.PaceReserve && !a.pace.OK:
		g.seen["reserve refused by its deadline"]++
	case c.pace.Op == admission.PaceReserve:
		g.seen["reserve granted"]++
		g.seen["cuts"] = g.cuts + int(a.pace.Gen) // the count of cuts so far
		if len(g.slots) < 32 {
			g.slots = append(g.slots, a.pace)
		}
	case c.pace.Op == admission.PaceConfirm && !a.pace.OK:
		g.seen["confirm of a void slot"]++
	case c.pace.Op == admission.PaceConfirm:
		g.sent = append(g.sent, a.pace)
		if len(g.sent) > 64 {
			g.sent = g.sent[1:]
		}
	case c.pace.Op == admission.PaceRefused:
		g.seen["refused"]++
	}
}

// probed counts what a probe after c found: the first cut, and how many
// sends the rate it cut was measured on (the window's 16, or fewer); a
// refusal that did not cut only by the count of cuts its slot was taken
// under (sent after the last cut, on its clock).
func (g *timeline) probed(c call, p answer) {
	before := g.gen
	g.gen = p.pace.Gen
	if c.what != "pace" || c.pace.Op != admission.PaceRefused {
		return
	}
	switch {
	case g.gen > before:
		g.cutAt = c.pace.Now
		if g.gen == 1 {
			g.seen["first cut"]++
			if g.seen["reserve granted"]-g.granted >= 16 {
				g.seen["first cut on a full window"]++
			}
		}
	case before > 0 && !c.pace.Sent.Before(g.cutAt) && c.pace.Gen < before:
		g.seen["refused without a cut by the count alone"]++
	}
}

// covered fails t unless the sequence exercised every branch of the
// steps at least 10 times: a sequence that never cut, or always did,
// would compare little.
func (g *timeline) covered(t *testing.T) {
	t.Helper()
	g.seen["refused without a cut"] = g.seen["refused"] - g.seen["cuts"]
	for what, least := range map[string]int{"cooldown extended": 10, "slot later than asked": 10, "reserve granted": 10,
		"reserve refused by its deadline": 10, "confirm of a void slot": 10, "cuts": 10, "refused without a cut": 10,
		"first cut on a full window": 1, "refused without a cut by the count alone": 3} {
		if g.seen[what] < least {
			t.Errorf("settings %+v: %s %d times; the sequence must exercise it", g.cfg, what, g.seen[what])
		}
	}
}

// newTimeline is a timeline from seed under cfg, counting into seen
// (shared by the sequences of a test).
func newTimeline(seed uint64, cfg admission.PaceConfig, seen map[string]int) *timeline {
	t0 := time.UnixMicro(1_800_000_000_000_000)
	g := &timeline{rng: rand.New(rand.NewPCG(29, seed)), start: t0, now: t0, cfg: cfg,
		seen: seen, granted: seen["reserve granted"], cuts: seen["cuts"]}
	g.calm = []int{0, 30, 150}[seed%3] // the first cut on one send, a few, a full window
	seen["sequences"]++
	return g
}

// drive makes n calls of g through a fresh MemoryCoordinator and a Redis
// Coordinator on deployment, and fails t at the first that Redis answers
// otherwise, or after which the pace's state differs: a probe (the hold,
// the next slot, the count of cuts) and the rate, to the last bit.
func drive(t *testing.T, srv *redisserver.Server, deployment string, g *timeline, n int) {
	t.Helper()
	ctx := context.Background()
	// The answers are compared, not their speed: a call of the default
	// 50 ms timed out once under the race detector on a loaded 2-core CI.
	red := open(t, srv, Options{Deployment: deployment, Now: func() time.Time { return g.now }, CallTimeout: 5 * time.Second})
	mem, err := admission.NewMemoryCoordinator(admission.MemoryOptions{})
	if err != nil {
		t.Fatal(err)
	}
	where := func(i int) string { return fmt.Sprintf("settings %+v, %s, call %d", g.cfg, deployment, i) }
	for i := range n {
		c := g.next()
		want, got := c.on(ctx, mem), c.on(ctx, red)
		compare(t, where(i), c, want, got)
		g.learn(c, want)
		if c.what != "pace" {
			continue
		}
		p := g.probe()
		pwant, pgot := p.on(ctx, mem), p.on(ctx, red)
		compare(t, where(i)+", the probe after it", p, pwant, pgot)
		if a, b := mem.Rate(), rate(t, red); a != b {
			t.Fatalf("%s, %v: rate %.17g in Go (memory), %.17g in Lua (Redis)", where(i), c, a, b)
		}
		g.probed(c, pwant)
	}
}

// TestSameStepsInGoAndLua: long sequences of calls — cooldown reads and
// extensions, slots of every width, pace reserves with and without a
// deadline, confirms of granted and void slots, admissions, refusals
// with and without a wait, some made at a lagging time, across idle
// spells — go through the Redis Coordinator (the Lua scripts) and the
// MemoryCoordinator (the Go code the in-process state runs), under three
// pace settings, and every answer must be the same, and so must the
// pace's state after each pace step (drive). The sequences must exercise
// every branch of the steps (covered), so they cannot pass by comparing
// little.
func TestSameStepsInGoAndLua(t *testing.T) {
	t.Parallel()
	srv := redisserver.Start(t)
	configs := []admission.PaceConfig{
		admission.DefaultPaceConfig(),
		{Decrease: 0.5, Increase: 0.1, MinRate: 1},
		{Decrease: 0.9, Increase: 1, MinRate: 0.05},
	}
	for i, cfg := range configs {
		seen := map[string]int{}
		var g *timeline
		for seq := range 3 {
			g = newTimeline(uint64(3*i+seq), cfg, seen)
			drive(t, srv, fmt.Sprintf("steps %d.%d", i, seq), g, 400)
		}
		g.covered(t)
	}
}

// FuzzSameSteps: a sequence from any seed, under any pace settings, goes
// through Redis and the memory store alike (drive). Its seed corpus runs
// with the tests; go test -fuzz FuzzSameSteps ./admission/redisstate/
// searches further (one redis-server for the run).
func FuzzSameSteps(f *testing.F) {
	srv := redisserver.Start(f)
	f.Add(uint64(0), uint8(191), uint8(4), uint8(0))
	f.Add(uint64(7), uint8(127), uint8(25), uint8(9))
	f.Add(uint64(11), uint8(250), uint8(255), uint8(0))
	var runs atomic.Int64
	f.Fuzz(func(t *testing.T, seed uint64, decrease, increase, floor uint8) {
		cfg := admission.PaceConfig{
			Decrease: (float64(decrease) + 1) / 257, // in (0, 1)
			Increase: (float64(increase) + 1) / 256, // in (0, 1]
			MinRate:  0.05 + float64(floor)/10,
		}
		drive(t, srv, fmt.Sprint("fuzz ", runs.Add(1)), newTimeline(seed, cfg, map[string]int{}), 200)
	})
}

// compare fails t at the first answer Redis gave otherwise than the
// memory store: what follows a divergence diverges too.
func compare(t *testing.T, where string, c call, mem, red answer) {
	t.Helper()
	if !same(c, mem, red) {
		t.Fatalf("%s, %v:\nGo (memory) %v\nLua (Redis) %v", where, c, mem, red)
	}
}

// rate is the rate the pace script keeps for c, written with 17
// significant digits: exactly the double it computed.
func rate(t *testing.T, c *Coordinator) float64 {
	t.Helper()
	v, err := c.client.HGet(context.Background(), c.keys[2], "rate").Result()
	if errors.Is(err, redis.Nil) {
		return 0
	}
	if err != nil {
		t.Fatal(err)
	}
	r, err := strconv.ParseFloat(v, 64)
	if err != nil {
		t.Fatal(err)
	}
	return r
}
