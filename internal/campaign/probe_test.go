package campaign

import (
	"fmt"
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
	"github.com/ptuprobe/ptuprobe/sim"
)

// TestRefillProbe: the probe's sends go charplan.ProbeSpacing ÷ charplan.ProbeUnits apart
// from the rest's end, at most charplan.ProbeUnits × twice the wave size, and end
// once a refusal is seen; what else is answered does not end them.
func TestRefillProbe(t *testing.T) {
	t.Parallel()
	p, err := RefillProbe(charplan.RefillRest, 40)
	step := charplan.ProbeSpacing / charplan.ProbeUnits
	if err != nil || p.Planned != 80*charplan.ProbeUnits || p.Group != results.GroupRefillProbe || p.Shape != results.ShapeBurst || p.Span != charplan.RefillRest+time.Duration(80*charplan.ProbeUnits-1)*step {
		t.Fatalf("plan %+v, %v", p, err)
	}
	a := p.Pacer.(answerPacer)
	for i := range 10 {
		at, wave, ok := p.Pacer.Next()
		if !ok || at != charplan.RefillRest+time.Duration(i)*step || wave != 0 {
			t.Fatalf("send %d: %v wave %d ok %v", i, at, wave, ok)
		}
		a.seeAnswer(&results.Record{Status: 200})
		a.seeAnswer(&results.Record{Status: 500})
	}
	a.seeAnswer(&results.Record{Status: 429})
	if at, _, ok := p.Pacer.Next(); ok {
		t.Errorf("a send at %v after a refusal", at)
	}
	q, _ := RefillProbe(time.Second, 2)
	n := 0
	for _, _, ok := q.Pacer.Next(); ok; _, _, ok = q.Pacer.Next() {
		n++
	}
	if n != 4*charplan.ProbeUnits {
		t.Errorf("unanswered, the probe of a wave of 2 sent %d, want %d", n, 4*charplan.ProbeUnits)
	}
	// Turned to the job's whole requests (a target they cannot be cut
	// for): a charplan.ProbeUnits-th as many, charplan.ProbeSpacing apart.
	w, _ := RefillProbe(time.Second, 2)
	pp := w.Pacer.(*probePacer)
	if s := pp.sender(nil); s != nil {
		t.Errorf("a sender that cannot cut: %v, want it unchanged", s)
	}
	var ats []time.Duration
	for at, _, ok := pp.Next(); ok; at, _, ok = pp.Next() {
		ats = append(ats, at)
	}
	if len(ats) != 4 || ats[1]-ats[0] != charplan.ProbeSpacing {
		t.Errorf("whole requests: sent at %v, want 4 charplan.ProbeSpacing apart", ats)
	}
	for _, bad := range []struct {
		rest time.Duration
		size int
	}{{0, 40}, {time.Second, 0}} {
		if _, err := RefillProbe(bad.rest, bad.size); err == nil {
			t.Errorf("RefillProbe(%v, %d): no error", bad.rest, bad.size)
		}
	}
}

// TestRefillChoice: the probe follows the default plans within the caps
// (left off with a note where they leave no room), a named plan only
// when asked for, and is refused, asked for where it cannot run.
func TestRefillChoice(t *testing.T) {
	t.Parallel()
	b, err := BurstPlan(charplan.Burst(), false)
	if err != nil {
		t.Fatal(err)
	}
	plans := []Plan{b}
	base := RefillChoice{Rest: 20 * time.Second, Size: 40, MaxRequests: 10_000, Budget: 10 * time.Minute}
	for _, c := range []struct {
		name   string
		change func(*RefillChoice)
		on     bool
		note   bool
		err    string
	}{
		{"default", func(*RefillChoice) {}, true, false, ""},
		{"off", func(c *RefillChoice) { c.Rest = 0 }, false, false, ""},
		{"named", func(c *RefillChoice) { c.Named = true }, false, false, ""},
		{"named, given", func(c *RefillChoice) { c.Named, c.Given = true, true }, true, false, ""},
		{"no room", func(c *RefillChoice) { c.MaxRequests = 200 }, false, true, ""},
		{"no time", func(c *RefillChoice) { c.Budget = 25 * time.Second }, false, true, ""},
		{"no room, given", func(c *RefillChoice) { c.MaxRequests, c.Given = 200, true }, false, false, "MaxRequests"},
		{"fleet", func(c *RefillChoice) { c.Fleet = true }, false, false, ""},
		{"fleet, given", func(c *RefillChoice) { c.Fleet, c.Given = true, true }, false, false, "RefillRest"},
		{"group, given", func(c *RefillChoice) { c.Group, c.Given = true, true }, false, false, "RefillRest"},
		{"negative", func(c *RefillChoice) { c.Rest = -time.Second }, false, false, "RefillRest"},
	} {
		rc := base
		c.change(&rc)
		p, on, note, err := rc.Probe(plans)
		field := ""
		if f, ok := err.(interface{ Field() string }); ok {
			field = f.Field()
		}
		if on != c.on || (note != "") != c.note || field != c.err || (err != nil) != (c.err != "") || on && p.Planned != 80*charplan.ProbeUnits {
			t.Errorf("%s: on %v note %q err %v planned %d", c.name, on, note, err, p.Planned)
		}
	}
}

// TestProbeUnitsChosen: after a first wave of 35 of 40 admitted, the
// pacer cuts the job's request into charplan.ProbeUnitsFor's units.
func TestProbeUnitsChosen(t *testing.T) {
	t.Parallel()
	p, _ := RefillProbe(time.Second, 40)
	pp := p.Pacer.(*probePacer)
	pp.choose([]int{35, 12, 11})
	if pp.units != 3 || pp.n != 3*charplan.ProbeFactor*40 || pp.spacing() != charplan.ProbeSpacing/3 {
		t.Errorf("after a first wave of 35: %d units, at most %d, %v apart", pp.units, pp.n, pp.spacing())
	}
}

// TestRefillProbeSendsQuarters: after a burst plan on the embedded
// simulator, the probe's requests carry a quarter of the job's prompt
// and max_tokens, and end at the first 429; with a prompts file (whose
// lines cannot be cut) they are the job's own requests.
func TestRefillProbeSendsQuarters(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	prompts := filepath.Join(dir, "p.jsonl")
	line := `{"prompt":"` + strings.Repeat("the ", 1000) + `"}` + "\n" // some 1,000 tokens
	if err := os.WriteFile(prompts, []byte(line), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		prompts        string
		prompt, output int // of every probe row: prompt_tokens_sent, max_tokens
	}{{"", 1000/charplan.ProbeUnits + 7, 100 / charplan.ProbeUnits}, {prompts, -1, 100}} {
		out := filepath.Join(dir, fmt.Sprintf("results-%v.csv", c.prompts != ""))
		synctest.Test(t, func(t *testing.T) {
			bp, err := BurstPlan(burst.Config{Size: 40, Waves: 1, Gap: time.Second}, false)
			if err != nil {
				t.Fatal(err)
			}
			probe, err := RefillProbe(2*time.Second, 40)
			if err != nil {
				t.Fatal(err)
			}
			job := Job{
				Plans: []Plan{bp, probe}, Output: out,
				Target: Target{Spec: client.Spec{PromptTokens: 1000, MaxTokens: 100, Timeout: time.Minute}, Prompts: c.prompts,
					Sim: sim.DefaultConfig(), InMemory: true},
				Options: Options{MaxInFlight: 512, MaxRequests: 1000, Wait: sleep.Until},
			}
			var bounds []string // what each plan's progress counts to
			job.Options.Watch = func(p Plan) (func(*results.Record), func(dispatch.Outcome)) {
				n, most := p.Bound()
				bounds = append(bounds, fmt.Sprintf("%s %d %v", p.Label(), n, most))
				return nil, nil
			}
			if _, err := Run(t.Context(), job); err != nil {
				t.Fatal(err)
			}
			// The probe's progress counts to its most as cut: u × 80.
			units := charplan.ProbeUnits
			if c.prompts != "" {
				units = 1
			}
			if want := []string{"burst 40 false", fmt.Sprintf("refill probe %d true", units*charplan.ProbeFactor*40)}; !slices.Equal(bounds, want) {
				t.Errorf("prompts %q: the plans' bounds as they start %q, want %q", c.prompts, bounds, want)
			}
		})
		n, refused := 0, 0
		for _, r := range testkit.ReadRecords(t, out) {
			if r.Group != results.GroupRefillProbe {
				continue
			}
			n++
			if r.Status == 429 {
				refused++
			}
			if c.prompt >= 0 && r.PromptTokensSent != c.prompt || r.MaxTokens != c.output {
				t.Fatalf("prompts %q: a probe row of prompt %d, max_tokens %d; want %d and %d", c.prompts, r.PromptTokensSent, r.MaxTokens, c.prompt, c.output)
			}
		}
		t.Logf("prompts %q: %d probe rows, %d refused", c.prompts, n, refused)
		if refused < 1 || n-refused < 2 || n >= charplan.ProbeUnits*charplan.ProbeFactor*40 {
			t.Errorf("prompts %q: %d probe rows, %d refused: want the bucket filled, then a refusal ending it", c.prompts, n, refused)
		}
	}
}

// TestJobCountSaysAtMost: the count characterize announces on stderr as
// it starts is the most the job may send, and says why, when its waves
// grow and size the ramp and the refill probe ends at its first 429 (the
// default main job: 160 as planned, at most 440 with its waves grown); a
// plan of fixed size is counted as it is.
func TestJobCountSaysAtMost(t *testing.T) {
	t.Parallel()
	bc := charplan.Burst()
	b, err := FirstContact(bc, 10_000, 256).Plan(false)
	if err != nil {
		t.Fatal(err)
	}
	probe, err := RefillProbe(charplan.RefillRest, bc.Size)
	if err != nil {
		t.Fatal(err)
	}
	plain, err := BurstPlan(bc, false)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		plans []Plan
		want  string
	}{
		{[]Plan{b, probe}, fmt.Sprintf("at most %d requests in 2 plans (the burst waves grow; the refill probe ends at its first 429)", 440+charplan.ProbeUnits*charplan.ProbeFactor*bc.Size)},
		{[]Plan{b}, "at most 440 requests in 1 plan (the burst waves grow)"},
		{[]Plan{plain}, "160 requests in 1 plan"},
	} {
		j := Job{Plans: c.plans}
		if got := j.Count(); got != c.want {
			t.Errorf("Count %q, want %q", got, c.want)
		}
	}
}
