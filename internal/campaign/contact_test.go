package campaign

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/ptuprobe/ptuprobe/burst"
	"github.com/ptuprobe/ptuprobe/client"
	"github.com/ptuprobe/ptuprobe/dispatch"
	"github.com/ptuprobe/ptuprobe/internal/charplan"
	"github.com/ptuprobe/ptuprobe/internal/sleep"
	"github.com/ptuprobe/ptuprobe/internal/testkit"
	"github.com/ptuprobe/ptuprobe/results"
	"github.com/ptuprobe/ptuprobe/schedule"
	"github.com/ptuprobe/ptuprobe/sim"
)

// waveSizes drains p's pacer, telling it, as each wave's send past
// size comes due, a refusal of the waves in refuse (a first attempt's,
// and answers that are not one), and returns each wave's sends.
func waveSizes(t *testing.T, p Plan, size int, refuse map[int]bool, gap time.Duration) []int {
	t.Helper()
	a := p.Pacer.(answerPacer)
	var sizes []int
	for j := 0; ; j++ {
		at, wave, ok := p.Pacer.Next()
		if !ok {
			return sizes
		}
		if at != time.Duration(wave)*gap {
			t.Fatalf("wave %d at %v", wave, at)
		}
		for len(sizes) <= wave {
			sizes = append(sizes, 0)
			j = 0
		}
		sizes[wave]++
		if j == 0 {
			a.seeAnswer(&results.Record{Wave: wave, Attempt: 1, Status: 200})
			a.seeAnswer(&results.Record{Wave: wave, Attempt: 2, Status: 429}) // a retry's
			a.seeAnswer(&results.Record{Wave: wave, Attempt: 1, Status: 500})
			if refuse[wave] {
				a.seeAnswer(&results.Record{Wave: wave, Attempt: 1, Status: 429})
			}
		}
	}
}

// TestContactGrowsUntilARefusal: the main job's waves (40, 2 s apart)
// grow ×2 while no wave before was refused, up to 4× 40, and go back to
// 40 from the wave after the first refused; a first wave refused in part
// (the embedded documents profile's: 33 of 40 admitted) leaves the plan
// as given, send for send.
func TestContactGrowsUntilARefusal(t *testing.T) {
	t.Parallel()
	b := charplan.Burst()
	for _, c := range []struct {
		refuse map[int]bool
		want   []int
	}{
		{nil, []int{40, 80, 160, 160}},
		{map[int]bool{1: true}, []int{40, 80, 40, 40}},
		{map[int]bool{2: true}, []int{40, 80, 160, 40}},
		{map[int]bool{0: true}, []int{40, 40, 40, 40}},
		{map[int]bool{0: true, 2: true}, []int{40, 40, 40, 40}},
	} {
		p, err := FirstContact(b, 10_000, 256).Plan(false)
		if err != nil {
			t.Fatal(err)
		}
		if got := waveSizes(t, p, b.Size, c.refuse, b.Gap); !slices.Equal(got, c.want) {
			t.Errorf("refused in waves %v: waves of %v, want %v", c.refuse, got, c.want)
		}
	}
	// Refused from the first wave: the arrivals are BurstPlan's.
	p, _ := FirstContact(b, 10_000, 256).Plan(false)
	q, _ := BurstPlan(b, false)
	p.Pacer.(answerPacer).seeAnswer(&results.Record{Wave: 0, Attempt: 1, Status: 429})
	for i := 0; ; i++ {
		at, wave, ok := p.Pacer.Next()
		at2, wave2, ok2 := q.Pacer.Next()
		if at != at2 || wave != wave2 || ok != ok2 {
			t.Fatalf("send %d: %v wave %d %v, BurstPlan's %v wave %d %v", i, at, wave, ok, at2, wave2, ok2)
		}
		if !ok {
			break
		}
	}
}

// TestFirstContactBounds: a wave grows to at most 4× the size, what
// --max-in-flight holds at once and what leaves the plan within the
// room the caps leave it (its most stated: Describe); a plan that
// cannot grow (one wave, spread, no room) is BurstPlan's.
func TestFirstContactBounds(t *testing.T) {
	t.Parallel()
	b := charplan.Burst()
	for _, c := range []struct {
		name        string
		c           burst.Config
		room, inFly int
		most, total int
	}{
		{"default", b, 10_000, 256, 160, 440},
		{"in flight", b, 10_000, 100, 100, 320},
		{"room", b, 200, 256, 53, 199}, // 40 + 53 × 3
		{"room, tight", b, 161, 256, 40, 160},
		{"no room", b, 100, 256, 40, 160},
		{"one wave", burst.Config{Size: 40, Waves: 1}, 10_000, 256, 40, 40},
		{"spread", burst.Config{Size: 40, Waves: 4, Gap: 2 * time.Second, Spread: time.Second}, 10_000, 256, 40, 160},
		{"one send", burst.Config{Size: 1, Waves: 4, Gap: time.Second}, 10_000, 256, 1, 4},
	} {
		f := FirstContact(c.c, c.room, c.inFly)
		if f.Most != c.most || f.MostRequests() != c.total {
			t.Errorf("%s: waves of at most %d, %d requests; want %d, %d", c.name, f.Most, f.MostRequests(), c.most, c.total)
		}
		p, err := f.Plan(false)
		if err != nil {
			t.Fatal(err)
		}
		if grows := p.Contact != nil; grows != (c.most > c.c.Size) || p.Most() != c.total || p.Planned != c.c.Total() {
			t.Errorf("%s: grows %v, most %d, planned %d", c.name, grows, p.Most(), p.Planned)
		}
		if _, plain := p.Pacer.(*burst.Plan); plain == (p.Contact != nil) {
			t.Errorf("%s: pacer %T", c.name, p.Pacer)
		}
	}
	p, _ := FirstContact(b, 10_000, 256).Plan(false)
	for _, w := range []string{"burst plan: 4 waves of 40 requests, 2s apart, each at one instant: 160 requests, peak 40 at once, spans 6s; growing to first contact",
		"waves of at most 160 (4× 40, within --max-requests and --max-in-flight), at most 440 requests, peak 160 at once"} {
		if !strings.Contains(p.Description, w) {
			t.Errorf("description %q lacks %q", p.Description, w)
		}
	}
}

// lateSender is admitSender answering late: as a deployment's refusal
// comes back after a round trip, not as its wave is sent.
type lateSender struct {
	admitSender
	late time.Duration
}

func (s *lateSender) Send(ctx context.Context, req dispatch.Request, record func(*results.Record)) {
	time.Sleep(s.late)
	s.admitSender.Send(ctx, req, record)
}

// TestRunPlansGrowsTheWaves: through the dispatch engine (its one
// arrival read ahead, pacing window on and off, waves waited for or
// not), each answer 100 ms after its send, waves of 4 a second apart admitted whole grow to 8 and 16; the
// third, refused in part (10 of 16 admitted), sends the fourth at 4;
// and the ramp after them is sized from the waves as sent: the most a
// wave after the first admitted (10) counts as 4 at most, a top of
// 2.5 × 4 ÷ 1 s = 10/s over 2 s from 1/s: 11 sends.
func TestRunPlansGrowsTheWaves(t *testing.T) {
	t.Parallel()
	for _, o := range []struct {
		waitWave bool
		window   time.Duration
	}{{false, 0}, {false, time.Millisecond}, {true, 0}} {
		synctest.Test(t, func(t *testing.T) {
			c := burst.Config{Size: 4, Waves: 4, Gap: time.Second}
			b, err := FirstContact(c, 1000, 100).Plan(o.waitWave)
			if err != nil {
				t.Fatal(err)
			}
			sc := schedule.Config{Phases: []schedule.Phase{{Name: "ramp", Duration: 2 * time.Second, From: 1, To: 2}}}
			s, err := SchedulePlan(sc)
			if err != nil {
				t.Fatal(err)
			}
			s = SizedByBurst(s, sc, b, 4, time.Second, 1000)
			sink := &memSink{}
			admit := &lateSender{admitSender{n: map[int]int{0: 4, 1: 8, 2: 10, 3: 100}}, 100 * time.Millisecond}
			if _, err := RunPlans(t.Context(), []Plan{b, s}, admit, sink, Options{RunID: "r", Wait: sleep.Until, PaceWindow: o.window}); err != nil {
				t.Fatal(err)
			}
			var waves []int
			sched := 0
			for _, r := range sink.recs {
				if r.Shape == results.ShapeScheduled {
					sched++
					continue
				}
				for len(waves) <= r.Wave {
					waves = append(waves, 0)
				}
				waves[r.Wave]++
			}
			if !slices.Equal(waves, []int{4, 8, 16, 4}) || sched != 11 {
				t.Errorf("wait %v, window %v: waves of %v, want [4 8 16 4]; %d scheduled sends, want 11", o.waitWave, o.window, waves, sched)
			}
		})
	}
}

// TestFirstContactLeavesTheDocumentsPlan: on the embedded documents
// profile (characterize's default target, its seed) the main job's first
// wave is refused in part, so the waves never grow: the run's results
// file, the same run id, has byte for byte the rows of the plan's as
// given (canonical: which seq of a wave sent at one instant drew which
// answer is the scheduler's order, which differs between two runs of
// one plan too).
func TestFirstContactLeavesTheDocumentsPlan(t *testing.T) {
	t.Parallel()
	docs, err := sim.OpenProfile(sim.ProfileDocuments)
	if err != nil {
		t.Fatal(err)
	}
	run := func(grow bool) string {
		out := filepath.Join(t.TempDir(), "results.csv")
		synctest.Test(t, func(t *testing.T) {
			b := charplan.Burst()
			bp, err := BurstPlan(b, false)
			if grow {
				bp, err = FirstContact(b, 10_000, 512).Plan(false)
			}
			if err != nil {
				t.Fatal(err)
			}
			if grow != (bp.Contact != nil) {
				t.Fatalf("grow %v: the plan's rule %v", grow, bp.Contact)
			}
			sp, err := SchedulePlan(schedule.Config{Phases: charplan.Phases()})
			if err != nil {
				t.Fatal(err)
			}
			job := Job{
				Plans:  []Plan{bp, sp},
				Output: out,
				Target: Target{Spec: client.Spec{PromptTokens: client.DefaultPromptTokens, MaxTokens: client.DefaultMaxTokens, Timeout: time.Minute},
					Sim: docs.Config, InMemory: true},
				Options: Options{RunID: "docs", MaxInFlight: 512, MaxRequests: 1000, Wait: sleep.Until},
			}
			if _, err := Run(t.Context(), job); err != nil {
				t.Fatal(err)
			}
		})
		return out
	}
	givenFile, grownFile := run(false), run(true)
	if given, grown := canonical(t, givenFile), canonical(t, grownFile); !slices.Equal(given, grown) {
		t.Errorf("the results differ: %d rows as given, %d with the rule", len(given), len(grown))
	}
	refused := 0
	for _, r := range testkit.ReadRecords(t, grownFile) {
		if r.Shape == results.ShapeBurst && r.Wave == 0 && r.Attempt == 1 && r.Status == 429 {
			refused++
		}
	}
	if refused == 0 {
		t.Error("the first wave was admitted whole: the rule would fire here")
	}
	t.Logf("the first wave: %d of 40 refused", refused)
}

// canonical is a results file's lines, the seq column blanked, sorted.
func canonical(t *testing.T, path string) []string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(string(b)), "\n")
	seq := slices.Index(strings.Split(lines[0], ","), "seq")
	if seq < 0 {
		t.Fatalf("no seq column: %s", lines[0])
	}
	for i, l := range lines[1:] {
		f := strings.Split(l, ",")
		f[seq] = ""
		lines[i+1] = strings.Join(f, ",")
	}
	slices.Sort(lines[1:])
	return lines
}
