package fit

import (
	"context"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/ptuprobe/ptuprobe/burst"
	"github.com/ptuprobe/ptuprobe/client"
	"github.com/ptuprobe/ptuprobe/dispatch"
	"github.com/ptuprobe/ptuprobe/internal/campaign"
	"github.com/ptuprobe/ptuprobe/internal/charplan"
	"github.com/ptuprobe/ptuprobe/results"
	"github.com/ptuprobe/ptuprobe/sim"
)

// deepAllowance is a deployment whose burst allowance the main job's
// default plan does not spend until its last sends: the run tells little
// of how large it is.
func deepAllowance() sim.Config {
	c := sim.DefaultConfig()
	c.PTU, c.BucketDepth, c.BurstPct, c.BurstRefill, c.Seed = 60, time.Second, 6000, time.Hour, 4
	return c
}

// fitSuggest fits file on budget b, the PTU model alone, asking for a
// suggested plan.
func fitSuggest(t *testing.T, b budget, file string) Result {
	t.Helper()
	fh, err := os.Open(file)
	if err != nil {
		t.Fatal(err)
	}
	defer fh.Close()
	r, err := Run(context.Background(), Job{inputs: []input{{Name: filepath.Base(file), R: fh}}, Threshold: DefaultThreshold, MinAgreement: DefaultMinAgreement,
		MaxWork: DefaultMaxWork, PromptTokens: client.DefaultPromptTokens, MaxTokens: client.DefaultMaxTokens, budget: b, models: []string{sim.ProfilePTU}, SuggestPlan: true})
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// TestSuggestedPlanNarrowsTheAllowance is part 6's test: on a deployment
// whose burst allowance the default plan cannot pin, the fit's range of
// burst-pct is wide; the plan --suggest-plan proposes, run against the
// same deployment and fitted, narrows it.
//
// Both fits are on the default budget (the first refusal's line and its
// refills, which quick budgets do not try). Round 9 (the line's refills
// the run's own, refillAt): the default plan's run fits good at 8,412%
// in a range of 625.5–10,000 (16×, the truth inside), and the suggested
// plan, waves of 160 four times a minute apart, fits good at 5,671% in a
// range of 1,410–6,021 (4.3×, the truth inside). It failed in rounds 5
// to 8 (.ci/run left it out): on the quick budget the default plan's
// run fitted poor (round 7: 1,713% in 426–9,765, then the suggested
// plan's run poor in 0.083–36.4), where the truth's own settings score
// good on both runs (0.004 and 0.014); on the default budget, line
// included (round 8), poor at 115.6% (98.5–235.8), the line's refill a
// constant 60 s against the truth's hour.
func TestSuggestedPlanNarrowsTheAllowance(t *testing.T) {
	long(t, "two fits")
	t.Parallel()
	target := campaign.Target{Sim: deepAllowance(), InMemory: true, Spec: defaultSpec()}
	first := fitSuggest(t, defaultBudget, runPlans(t, target))
	wide := first.ranges["burst-pct"]
	t.Logf("default plan: %s; burst-pct %v range %v; suggestion %+v", first.Profile.Fit.Quality, first.Profile.Config.BurstPct, wide, first.suggestion)
	if first.suggestion == nil || len(first.suggestion.Flags) == 0 {
		t.Fatalf("no plan suggested: %+v", first.suggestion)
	}
	second := fitSuggest(t, defaultBudget, suggestedJob(t, target.Sim, first.suggestion.Flags))
	narrow := second.ranges["burst-pct"]
	t.Logf("suggested plan %v: %s; burst-pct %v range %v", first.suggestion.Flags, second.Profile.Fit.Quality, second.Profile.Config.BurstPct, narrow)
	if wide[1]/wide[0] < 3 {
		t.Errorf("the default plan's burst-pct range %v is not wide (want a ratio of 3 or more)", wide)
	}
	if narrow[1]/narrow[0] >= wide[1]/wide[0]/2 {
		t.Errorf("the suggested plan's range %v is not narrower than half the default's %v", narrow, wide)
	}
}

// TestSentPlanWords: --suggest-plan words the plan the run sent from its
// recorded sends: on target c (its first wave of 40 admitted whole) the
// main job's waves grew to 80 and its refill probe sent whole requests;
// on target e (26 of 40 admitted first) its waves stayed 40 and its
// probe sent quarters. The suggestion's text says what it weighed its
// candidates against (it said "the main job's default plan" and weighed
// four waves of 40 and no probe before).
func TestSentPlanWords(t *testing.T) {
	t.Parallel()
	// The probe's count varies by a send or two with the order its
	// answers come in.
	for _, c := range []struct {
		name string
		cfg  sim.Config
		want string
	}{
		{"c", targetC(), `^burst waves of 40, 80, 40, 40; 327 scheduled sends; a refill probe of \d+ sends, each whole requests$`},
		{"e", targetE(), `^burst waves of 40, 40, 40, 40; 171 scheduled sends; a refill probe of 5\d sends, each a quarter of the request$`},
	} {
		w := workloadOf(t, mainJob(t, c.cfg, charplan.RefillRest))
		if got := sentPlan(w, client.DefaultMaxTokens); !regexp.MustCompile(c.want).MatchString(got) {
			t.Errorf("%s: the plan sent %q, want %s", c.name, got, c.want)
		}
	}
	var b strings.Builder
	printSuggestion(&b, &suggestion{Flags: burstFlags(burst.Config{Size: 160, Waves: 4, Gap: time.Minute}), Sent: "burst waves of 40, 80, 40, 40",
		Settings: []separation{{Name: "burst-pct", Low: 36.75, High: 209.6, Sent: 0.175, Suggested: 0.7, SentTold: [2]float64{36.75, 209.6}, SuggestedTold: [2]float64{70, 100}}}})
	want := `suggested plan, to tell apart what this run cannot: ptuprobe characterize --burst-size 160 --burst-waves 4 --burst-gap 1m0s (its waves as given: they do not grow, and no refill probe follows them)
  weighed against the plan this run sent (burst waves of 40, 80, 40, 40)
  burst-pct from 36.75 to 209.6: the sends of the plan this run sent tell it from 36.75 to 209.6, the suggested one's (replayed at the fitted settings) from 70 to 100
`
	if b.String() != want {
		t.Errorf("the suggestion reads\n%s\nwant\n%s", b.String(), want)
	}
	b.Reset()
	printSuggestion(&b, &suggestion{Flags: candidate{burst: burst.Config{Size: 160, Waves: 4, Gap: 20 * time.Second}, rest: 3 * time.Minute}.flags(), Sent: "burst waves of 40, 40, 40, 40",
		Settings: []separation{{Name: "burst-refill", Low: 187.145, High: 3600, Sent: 0.052, Suggested: 0.83, SentTold: [2]float64{187.145, 3600}, SuggestedTold: [2]float64{243.823, 293.188}}}})
	want = `suggested plan, to tell apart what this run cannot: ptuprobe characterize --burst-size 160 --burst-waves 4 --burst-gap 20s --refill-rest 3m0s (its waves as given: they do not grow, and the refill probe follows the schedule after a rest of 3m0s)
  weighed against the plan this run sent (burst waves of 40, 40, 40, 40)
  burst-refill from 3m7.145s to 1h0m0s: the sends of the plan this run sent tell it from 3m7.145s to 1h0m0s, the suggested one's (replayed at the fitted settings) from 4m3.823s to 4m53.188s
`
	if b.String() != want {
		t.Errorf("the suggestion reads\n%s\nwant\n%s", b.String(), want)
	}
	b.Reset()
	printSuggestion(&b, &suggestion{Sent: "burst waves of 40, 80, 40, 40", Settings: []separation{{Name: "burst-pct", Low: 36.75, High: 209.6, Sent: 0.7, Suggested: 0.7}}})
	if !strings.HasPrefix(b.String(), "suggested plan: none tells apart what this run cannot better than the plan this run sent (burst waves of 40, 80, 40, 40)\n") {
		t.Errorf("no candidate better: the suggestion reads\n%s", b.String())
	}
}

// TestSuggestionWeighsThePlanSent: fitted, target c's main job (its waves
// grown to 80, its probe's whole requests) gets a suggestion weighed
// against its recorded sends, which says so.
func TestSuggestionWeighsThePlanSent(t *testing.T) {
	long(t, "a fit and its suggestion's replays")
	t.Parallel()
	r := fitSuggest(t, tiny, mainJob(t, targetC(), charplan.RefillRest))
	var b strings.Builder
	if err := Print(&b, r); err != nil {
		t.Fatal(err)
	}
	text := b.String()
	t.Logf("c: %s", text[strings.Index(text, "quality:"):])
	if r.suggestion == nil || len(r.suggestion.Settings) == 0 {
		t.Fatalf("c: no setting left open: %+v", r.suggestion)
	}
	sent := regexp.MustCompile(`(weighed against|better than) the plan this run sent \(burst waves of 40, 80, 40, 40; 327 scheduled sends; a refill probe of \d+ sends, each whole requests\)\n`)
	if !sent.MatchString(text) {
		t.Errorf("c: the suggestion does not say it weighs against the plan the run sent, %s", sent)
	}
}

// suggestedJob runs, against an embedded simulator of cfg (in a synctest
// bubble, on an in-memory network), what `ptuprobe characterize` runs on
// the flags of a suggestion (candidate.flags): the burst plan as given
// (its waves do not grow), the default schedule sized by its waves, and
// the refill probe after --refill-rest when it is given (campaign's
// RefillChoice, Given and Named), within characterize's default caps.
// It returns the results file.
func suggestedJob(t *testing.T, cfg sim.Config, flags []string) string {
	t.Helper()
	bc, rest := suggestedPlan(t, flags)
	return runMainPlans(t, cfg, bc, false, campaign.RefillChoice{Rest: rest, Given: rest > 0, Named: true, Size: bc.Size,
		MaxRequests: dispatch.DefaultMaxRequests, Budget: charplan.Cap}, dispatch.DefaultMaxRequests, dispatch.DefaultMaxInFlight)
}

// suggestedPlan is the burst plan and the probe's rest (0: none) of a
// suggestion's flags, the default's where not given.
func suggestedPlan(t *testing.T, flags []string) (burst.Config, time.Duration) {
	t.Helper()
	bc := charplan.Burst()
	var rest time.Duration
	for i := 0; i+1 < len(flags); i += 2 {
		v := flags[i+1]
		var err error
		switch flags[i] {
		case "--burst-size":
			bc.Size, err = strconv.Atoi(v)
		case "--burst-waves":
			bc.Waves, err = strconv.Atoi(v)
		case "--burst-gap":
			bc.Gap, err = time.ParseDuration(v)
		case "--refill-rest":
			rest, err = time.ParseDuration(v)
		default:
			t.Fatalf("suggested flag %s: not one characterize's plans take here", flags[i])
		}
		if err != nil {
			t.Fatal(err)
		}
	}
	if len(flags)%2 != 0 {
		t.Fatalf("suggested flags %v: a flag without its value", flags)
	}
	return bc, rest
}

// TestSuggestedPlanNarrowsTheRefill: on a deployment whose refill the
// main job's run does not pin (target e; the simulator's defaults, f),
// the suggestion weighs plans with the refill probe after longer rests
// by the refill range each one's run would tell (refillReading), and
// proposes one that rests longer than the main job's 20 s before the
// probe or between its waves; run against the same deployment and
// fitted, that plan narrows the refill's range to less than half its
// ratio, the truth inside. Before (round 12's candidates: no probe, the
// refill weighed at two points that differ in their allowance and cold
// drain too) e's suggestion was 160 sends 8 times 20 s apart, whose run
// left f's refill 174 s – 1 h (20.7×).
func TestSuggestedPlanNarrowsTheRefill(t *testing.T) {
	long(t, "two whole fits a target and a suggestion")
	t.Parallel()
	for _, target := range []struct {
		name string
		cfg  sim.Config
	}{{"e", targetE()}, {"f", targetF()}} {
		truth := target.cfg.BurstRefill.Seconds()
		first := fitSuggest(t, defaultBudget, mainJob(t, target.cfg, charplan.RefillRest))
		wide := first.ranges["burst-refill"]
		var b strings.Builder
		printSuggestion(&b, first.suggestion)
		t.Logf("%s, the main job: %s, refill %v [%.1f, %.1f]\n%s", target.name, first.Profile.Fit.Quality, first.Profile.Config.BurstRefill, wide[0], wide[1], b.String())
		if wide[1]/wide[0] < 4 {
			t.Errorf("%s: the main job's refill range [%.1f, %.1f] is not wide (want a ratio of 4 or more)", target.name, wide[0], wide[1])
		}
		if first.suggestion == nil || len(first.suggestion.Flags) == 0 {
			t.Errorf("%s: no plan suggested", target.name)
			continue
		}
		bc, rest := suggestedPlan(t, first.suggestion.Flags)
		if rest <= charplan.RefillRest && (bc.Waves < 2 || bc.Gap <= charplan.RefillRest) {
			t.Errorf("%s: the suggestion %v rests no longer than the main job's %v", target.name, first.suggestion.Flags, charplan.RefillRest)
		}
		second := fitSuggest(t, defaultBudget, suggestedJob(t, target.cfg, first.suggestion.Flags))
		narrow := second.ranges["burst-refill"]
		t.Logf("%s, the suggested plan %v: %s, refill %v [%.1f, %.1f]", target.name, first.suggestion.Flags, second.Profile.Fit.Quality, second.Profile.Config.BurstRefill, narrow[0], narrow[1])
		if second.Profile.Fit.Quality != sim.FitGood || narrow[0] > truth || truth > narrow[1] || narrow[1]/narrow[0] >= wide[1]/wide[0]/2 {
			t.Errorf("%s: the suggested plan's run fits %s, refill [%.1f, %.1f]: want good, %g s inside, and a ratio under half the main job's [%.1f, %.1f]",
				target.name, second.Profile.Fit.Quality, narrow[0], narrow[1], truth, wide[0], wide[1])
		}
	}
}

// TestCandidateProbeAsSent: the refill probe --suggest-plan replays for
// a candidate (candidateReplayer: probePlan, over charplan's constants
// and ProbeUnitsFor, which campaign's pacer uses too) is the one characterize
// sends on the candidate's flags: on target e (26 of a first wave of 40
// admitted) a quarter of the request 6.25 ms apart after the rest, on
// target c (its first wave admitted whole) the job's whole requests
// 25 ms apart.
func TestCandidateProbeAsSent(t *testing.T) {
	t.Parallel()
	c := candidate{burst: charplan.Burst(), rest: time.Minute}
	for _, target := range []struct {
		name string
		cfg  sim.Config
		u    int
	}{{"e", targetE(), 4}, {"c", targetC(), 1}} {
		w := workloadOf(t, suggestedJob(t, target.cfg, c.flags()))
		var sent []send
		for _, p := range w.Runs[0].Plans {
			for _, s := range p.Sends {
				if s.Group == results.GroupRefillProbe && s.attempt == 1 {
					sent = append(sent, s)
				}
			}
		}
		f := &fitter{job: &Job{PromptTokens: client.DefaultPromptTokens, MaxTokens: client.DefaultMaxTokens}}
		rp, err := f.candidateReplayer(t.Context(), c)(false, target.cfg, 0)
		if err != nil {
			t.Fatal(err)
		}
		var replayed []send
		for _, s := range rp.sends {
			if s.Group == results.GroupRefillProbe {
				replayed = append(replayed, s)
			}
		}
		if len(sent) < 2 || len(replayed) < len(sent) {
			t.Fatalf("%s: the probe sent %d, the replay has %d", target.name, len(sent), len(replayed))
		}
		spacing := charplan.ProbeSpacing / time.Duration(target.u)
		for i, s := range sent {
			r := replayed[i]
			if s.MaxTokens != r.MaxTokens || s.MaxTokens != max(client.DefaultMaxTokens/target.u, 1) {
				t.Errorf("%s: probe send %d asked %d tokens, the replay's %d, want %d", target.name, i, s.MaxTokens, r.MaxTokens, client.DefaultMaxTokens/target.u)
			}
			if d := s.At - r.At; d < -20*time.Millisecond || d > 20*time.Millisecond {
				t.Errorf("%s: probe send %d went at %v after its plan's start, the replay's at %v", target.name, i, s.At, r.At)
			}
		}
		if r := replayed[0]; r.At != c.rest || replayed[1].At-r.At != spacing || len(replayed) != target.u*charplan.ProbeFactor*c.burst.Size {
			t.Errorf("%s: the replayed probe starts at %v, %v apart, %d sends: want %v, %v, %d", target.name, r.At, replayed[1].At-r.At, len(replayed), c.rest, spacing, target.u*charplan.ProbeFactor*c.burst.Size)
		}
	}
}

// TestSuggestedPlanDoesNotWidenTheAllowance: --suggest-plan weighs each setting it
// does not pin by the range a candidate's run would tell it
// (toldRanges), so the plan it proposes on served target e's main job
// (testdata/served-e.csv; target e, 300 PTU, 1 s, 175%, 5 minutes), run
// against e and fitted, tells the allowance (the bucket's depth and the
// percent of it: bucket-depth, burst-pct) no more widely than the main
// job's run did (0.342–1.341 s, 95.79–508.4%), and the refill more
// narrowly. Weighed instead by how far apart the two points at each end
// of a range answered a plan (round 13), the suggestion was 80 sends 4
// times 20 s apart and the probe after 3 minutes, whose run told the
// depth 0.437–2.006 s or 0.437–2.136 s (its run varies run to run), the
// PTU 224.5–415.5 or 223.1–427 (238.2–411.3). The PTU is not held here:
// the suggested plan's run is fitted by a search of its own, which finds
// points the main job's fit never tried (toldRanges weighs only those),
// and told it 257.3–353.7 or 257.3–453.9.
func TestSuggestedPlanDoesNotWidenTheAllowance(t *testing.T) {
	long(t, "two whole fits and a suggestion")
	t.Parallel()
	first := fitSuggest(t, defaultBudget, "testdata/served-e.csv")
	var b strings.Builder
	printSuggestion(&b, first.suggestion)
	t.Logf("served e: %s, ranges %v\n%s", first.Profile.Fit.Quality, first.ranges, b.String())
	if first.suggestion == nil || len(first.suggestion.Flags) == 0 {
		t.Fatalf("no plan suggested: %+v", first.suggestion)
	}
	second := fitSuggest(t, defaultBudget, suggestedJob(t, targetE(), first.suggestion.Flags))
	t.Logf("the suggested plan %v: %s, ranges %v", first.suggestion.Flags, second.Profile.Fit.Quality, second.ranges)
	ratio := func(r [2]float64) float64 { return r[1] / r[0] }
	for _, name := range []string{"bucket-depth", "burst-pct", "burst-refill"} {
		wide, told := first.ranges[name], second.ranges[name]
		if wide[0] <= 0 || told[0] <= 0 || ratio(told) > ratio(wide) || name == "burst-refill" && ratio(told) >= ratio(wide)/2 {
			t.Errorf("the suggested plan's run tells %s %v, the main job's %v", name, told, wide)
		}
	}
}
