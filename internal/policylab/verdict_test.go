package policylab

import (
	"math"
	"strings"
	"testing"
	"time"
)

// mrow is a row of one group (1.5x, 16 clients) with what the verdict
// reads: the measure and the load per repeat (200 offered each), and the
// p99 of the successes.
func mrow(policy string, shares, loads []float64, p99 float64) Row {
	r := Row{Policy: policy, Name: policy, Traits: traitsOf(policy), Models: models[policy], OwnCaps: models[policy] != "", Load: "1.5x", LoadX: 1.5, Clients: 16,
		Repeats: len(shares), MaxAttempts: 20, Budget: 30 * time.Second, Requests: 1000, Succeeded: 500}
	ms := make([]repeatMeasure, len(shares))
	for k := range shares {
		ms[k] = repeatMeasure{Offered: 200, InSLO: int(math.Round(2 * shares[k])), Attempts: int(math.Round(200 * loads[k])),
			OfferedFirst: 100, InSLOFirst: int(math.Round(shares[k]))}
	}
	r.setMeasures(ms, fixtureLatencies(p99/4, p99))
	return r
}

// five repeats of about v, moved alike by each repeat's swing.
func five(v, spread float64) []float64 {
	out := make([]float64, len(swing))
	for k, s := range swing {
		out[k] = v + s*spread
	}
	return out
}

func judgeOne(t *testing.T, rows ...Row) *verdictGroup {
	t.Helper()
	gs := judge(Sweep{Rows: rows, MaxAttempts: 20})
	if len(gs) != 1 {
		t.Fatalf("%d groups", len(gs))
	}
	return &gs[0]
}

func order(g *verdictGroup) string {
	var s []string
	for _, p := range g.Ranked {
		s = append(s, p.RankLabel()+" "+p.Policy)
	}
	return strings.Join(s, ", ")
}

func picked(g *verdictGroup) string {
	var s []string
	for _, r := range g.Recommendations() {
		s = append(s, r.Policy)
	}
	return strings.Join(s, ", ")
}

// TestRankingFollowsTheSteps: the ranked tables follow the
// recommendation's steps: the smallest regret (the measure over every
// offered request), then, within equivalenceMargin of it, the fewest
// attempts, then the simpler policy; the recommendation first. No step
// reads the survivors' latency: a policy that answers as many for less
// load ranks first however slow its successes. Rows the steps do not tell
// apart share a rank, in the lab's order, never by name.
func TestRankingFollowsTheSteps(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		name       string
		rows       []Row
		order, rec string
	}{
		{"the measure decides, whatever the load",
			[]Row{mrow("a", five(50, 4), five(1, 0), 1000), mrow("b", five(60, 4), five(9, 0), 1000)}, "1 b, 2 a", "b"},
		{"within the margin: the load decides",
			[]Row{mrow("a", []float64{60, 64, 55, 62, 59}, five(3, 0), 1000), mrow("b", []float64{62, 61, 58, 60, 63}, five(1, 0), 1000)},
			"1 b, 2 a", "b"},
		{"a difference under the margin is none",
			[]Row{mrow("a", five(61.5, 4), five(3, 0), 1000), mrow("b", five(60, 4), five(1, 0), 1000)}, "1 b, 2 a", "b"},
		{"no survivor's latency: as many answered for less load, however slow",
			[]Row{mrow("slow", five(60, 4), five(1, 0), 9000), mrow("quick", five(60, 4), five(3, 0), 1000)}, "1 slow, 2 quick", "slow"},
		{"past the margin the measure wins, however heavy",
			[]Row{mrow("light", five(57, 4), five(1, 0), 1000), mrow("heavy", five(60, 4), five(9, 0), 1000)}, "1 heavy, 2 light", "heavy"},
		{"a tie is named, in the lab's order, not by name",
			[]Row{mrow("zeta", five(60, 4), five(1, 0), 1000), mrow("alpha", five(60, 4), five(1, 0), 9000), mrow("low", five(40, 4), five(1, 0), 1000)},
			"=1 zeta, =1 alpha, 3 low", "zeta"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			g := judgeOne(t, tt.rows...)
			if got := order(g); got != tt.order {
				t.Errorf("ranked %s, want %s", got, tt.order)
			}
			if got := picked(g); got != tt.rec {
				t.Errorf("recommended %q, want %q", got, tt.rec)
			}
		})
	}
	// Step 4 puts none first where a retrier that leads steps 2 and 3
	// answers less than retryGain points more.
	g := judgeOne(t, mrow("honor", five(61, 4), five(3, 0), 1000), noneRow(five(60, 4)))
	if got := order(g); got != "1 none, 2 honor" {
		t.Errorf("ranked %s, want none first", got)
	}
}

// TestRecommendation: only a fair row for one deployment whose measure is
// steady is recommended; several are "no clear difference among"; too few
// repeats recommend nothing and say why.
func TestRecommendation(t *testing.T) {
	t.Parallel()
	fair := mrow("honor", five(60, 4), five(3, 0), 1000)
	modelled := mrow("sdk", five(70, 4), five(1, 0), 900)
	redirect := mrow("redirect", five(80, 4), five(1, 0), 900)
	redirect.Fallback = true
	drifting := mrow("pace", five(50, 4), five(1, 0), 900)
	drifting.Steady, drifting.DriftPts = false, 3
	g := judgeOne(t, fair, modelled, redirect, drifting)
	if picked(g) != "honor" || !strings.HasPrefix(g.RecommendationSentence(), "honor: 60% of offered requests answered within the SLO") {
		t.Errorf("recommended %q: %s", picked(g), g.RecommendationSentence())
	}
	// A row whose measure still moves, among the best: nothing, and why.
	leading := mrow("pace", five(65, 4), five(1, 0), 900)
	leading.Steady, leading.DriftPts = false, 3
	g = judgeOne(t, fair, leading)
	if len(g.Recommended) != 0 || !strings.Contains(g.RecommendationSentence(), "the measure of pace (+3 pp between the window's halves) still moved") {
		t.Errorf("an unsteady leader: recommended %q: %s", picked(g), g.RecommendationSentence())
	}
	// Equivalents with as many attempts: the simpler, honour without jitter.
	twin := mrow("honor-no-jitter", five(60, 4), five(3, 0), 1000)
	g = judgeOne(t, fair, twin)
	if s := g.RecommendationSentence(); !strings.HasPrefix(s, "honor-no-jitter: 60% ") ||
		!strings.Contains(s, "Past capacity no policy can answer more than about 66.7% of the offered requests.") {
		t.Errorf("sentence %q", s)
	}
	few := mrow("honor", []float64{60, 62}, []float64{3, 3}, 1000)
	g = judgeOne(t, few, mrow("backoff", []float64{40, 42}, []float64{3, 3}, 1000))
	if len(g.Recommended) != 0 || !strings.Contains(g.RecommendationSentence(), "a recommendation needs at least 3") {
		t.Errorf("two repeats: %q", g.RecommendationSentence())
	}
}

// TestJudgeGroupsByCap: the SDKs' cap is a group of its own, with the
// rows of caps of their own in both; the lab's group says whether the cap
// changes the verdict.
func TestJudgeGroupsByCap(t *testing.T) {
	t.Parallel()
	honor := mrow("honor", five(60, 4), five(9, 0), 1000)
	throttle := mrow("sre-throttle", five(60, 4), five(2, 0), 1000)
	sdk := mrow("sdk", five(60, 4), five(2.5, 0), 1000)
	honor3, throttle3 := mrow("honor", five(60, 4), five(1.5, 0), 1000), mrow("sre-throttle", five(60, 4), five(2, 0), 1000)
	honor3.SDKCap, throttle3.SDKCap, honor3.MaxAttempts, throttle3.MaxAttempts = true, true, 3, 3
	gs := judge(Sweep{Rows: []Row{honor, throttle, sdk, honor3, throttle3}, MaxAttempts: 20, SDKMaxAttempts: 3})
	if len(gs) != 2 || gs[0].SDKCap || !gs[1].SDKCap || len(gs[0].Ranked) != 3 || len(gs[1].Ranked) != 3 {
		t.Fatalf("groups %+v", gs)
	}
	if picked(&gs[0]) != "sre-throttle" || picked(&gs[1]) != "honor" || gs[1].Name() != "1.5x, 16 clients, the SDKs' cap (3 attempts)" {
		t.Errorf("recommended %q and %q (%s)", picked(&gs[0]), picked(&gs[1]), gs[1].Name())
	}
	if same, ok := gs[0].SameUnderBothCaps(gs); same || !ok ||
		gs[0].capLine(gs) != "Under the SDKs' cap (3 attempts) the verdict differs: honor. Here the attempts cap decides, not the policy alone." {
		t.Errorf("cap line %q", gs[0].capLine(gs))
	}
	// The same pick under both caps.
	throttle3 = mrow("sre-throttle", five(60, 4), five(1.2, 0), 1000)
	throttle3.SDKCap, throttle3.MaxAttempts = true, 3
	gs = judge(Sweep{Rows: []Row{honor, throttle, sdk, honor3, throttle3}, MaxAttempts: 20, SDKMaxAttempts: 3})
	if got := gs[0].capLine(gs); got != "Under the SDKs' cap (3 attempts) the verdict is the same." {
		t.Errorf("cap line %q", got)
	}
}

// TestCoordinatedRankedApart: a coordinated row is ranked with its kind,
// never recommended for a fleet that does not share its state, and
// recommended to one that does only where it does at least as well as
// the independent recommendation (a store costs something).
func TestCoordinatedRankedApart(t *testing.T) {
	t.Parallel()
	shared := mrow("slots", five(70, 4), five(1, 0), 900)
	shared.Coordinated = true
	g := judgeOne(t, mrow("honor", five(60, 4), five(3, 0), 1000), shared)
	if picked(g) != "honor" || len(g.Coordinated) != 1 || len(g.CoordinatedPick) != 1 ||
		!strings.HasPrefix(g.coordinatedLine(), "A fleet that can share its retry owners' state (the coordinated rows, ranked apart): slots,") {
		t.Errorf("recommended %q; coordinated %d, picked %v: %s", picked(g), len(g.Coordinated), g.CoordinatedPick, g.coordinatedLine())
	}
	worse := mrow("slots", five(50, 4), five(1, 0), 900)
	worse.Coordinated = true
	g = judgeOne(t, mrow("honor", five(60, 4), five(3, 0), 1000), worse)
	if len(g.CoordinatedPick) != 0 || !strings.HasPrefix(g.coordinatedLine(), "Sharing the fleet's state does not pay here: slots, ranked apart") {
		t.Errorf("a coordinated row worse than the recommendation: picked %v: %s", g.CoordinatedPick, g.coordinatedLine())
	}
}

// redirected sets r's requests redirected to the fallback, n of each
// repeat's 200.
func redirected(r Row, n int) Row {
	r.Measures = append([]repeatMeasure(nil), r.Measures...)
	for k := range r.Measures {
		r.Measures[k].Redirected = n
	}
	return r
}

// late sets r's requests that ended after the budget, n of each repeat's
// 200 (0.5% each).
func late(r Row, n int) Row {
	r.Measures = append([]repeatMeasure(nil), r.Measures...)
	for k := range r.Measures {
		r.Measures[k].Late = n
	}
	return r
}

func unsteady(r Row) Row {
	r.Steady = false
	return r
}

// TestGiveUpWhenNoneLeads: with none recommended, (e) judges the
// best-ranked policy that retries, not none against itself: a late one
// breaks it, an on-time one confirms it, and the sentence says which.
func TestGiveUpWhenNoneLeads(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		late int
		want findingOutcome
	}{{0, confirmed}, {2, contradicted}} {
		g := judgeOne(t, noneRow(five(60, 4)), late(mrow("honor", five(60.5, 4), five(3, 0), 1000), tt.late))
		f := g.Findings[len(g.Findings)-1]
		if picked(g) != "none" || f.Rule.Key != "e" || f.Outcome != tt.want ||
			!strings.HasPrefix(f.Sentence, "none, the recommendation, never retries: judged instead on the best-ranked policy that does, honor ended") {
			t.Errorf("%d late: recommended %q; (e) %s: %s", tt.late, picked(g), f.Outcome, f.Sentence)
		}
	}
}

// TestFindings: each part of the rule on the verdict's own order.
func TestFindings(t *testing.T) {
	t.Parallel()
	base := []Row{
		mrow("none", five(55, 4), five(1, 0), 900),
		mrow("sdk", five(60, 4), five(2.5, 0), 1000),
		mrow("honor", five(60, 4), five(3, 0), 1000),
	}
	for _, tt := range []struct {
		rule string
		rows []Row
		want findingOutcome
	}{
		// (a) the same client with one owner (sdk-one-owner, 12 attempts)
		// and with two (stacked, 4 calls of 3); sdk's 3 attempts alone
		// is not that comparison.
		{"a", []Row{mrow("sdk-one-owner", five(60, 4), five(6, 0), 1500), mrow("stacked", five(60, 4), five(8, 0), 3000)}, confirmed},
		{"a", []Row{mrow("sdk-one-owner", five(60, 4), five(8, 0), 3000), mrow("stacked", five(70, 4), five(8, 0), 1000)}, contradicted},
		{"a", []Row{mrow("stacked", five(60, 4), five(8, 0), 3000)}, notTested},
		{"a", nil, notTested},
		{"b", []Row{mrow("backoff", five(40, 4), five(2, 0), 9000)}, confirmed},
		{"b", []Row{mrow("fixed:1s", five(60, 4), five(1.2, 0), 1100)}, contradicted},
		{"c", []Row{mrow("honor-no-jitter", five(60, 4), five(3, 0), 1000)}, noClearDifference},
		{"c", []Row{mrow("honor-no-jitter", five(50, 4), five(3, 0), 1000)}, confirmed},
		{"e", nil, confirmed},
		// (e) a recommendation whose requests end past the budget breaks it.
		// A policy not recommended is not judged, however late.
		{"e", []Row{late(mrow("backoff", five(40, 4), five(3, 0), 1000), 20)}, confirmed},
		{"e", []Row{late(mrow("pace", five(65, 4), five(1, 0), 1000), 2)}, contradicted},
		// (d) priced redirects, steady rows only: budget redirects little
		// and answers as much as redirect, which redirects everything.
		{"d", []Row{redirected(mrow("budget", five(62, 4), five(3, 0), 1000), 10), redirected(mrow("redirect", five(64, 4), five(2, 0), 900), 60)}, confirmed},
		// budget's 10 points over honor cost 30% redirected: priced at 0.5
		// it is 5 points behind honor (and redirect's 15 cost 50%).
		{"d", []Row{redirected(mrow("budget", five(70, 4), five(3, 0), 1000), 60), redirected(mrow("redirect", five(75, 4), five(2, 0), 900), 100)}, contradicted},
		{"d", []Row{redirected(unsteady(mrow("budget", five(62, 4), five(3, 0), 1000)), 10), redirected(mrow("redirect", five(64, 4), five(2, 0), 900), 60)}, notTested},
		{"d", []Row{redirected(mrow("budget", five(62, 4), five(3, 0), 1000), 10)}, notTested},
	} {
		g := judgeOne(t, append(append([]Row(nil), base...), tt.rows...)...)
		var f *finding
		for i := range g.Findings {
			if g.Findings[i].Rule.Key == tt.rule {
				f = &g.Findings[i]
			}
		}
		if f == nil || f.Outcome != tt.want || f.Sentence == "" {
			t.Errorf("rule %s with %d rows: %+v, want %v", tt.rule, len(tt.rows), f, tt.want)
		}
	}
}

// TestCoordinatedStepFourFiltersFirst: coordinationPays applies step 4
// as choose does, to each coordinated row within the regret margin before
// the lightest is taken: a lighter coordinated row that gains too little
// over none does not hide a heavier one that gains enough.
func TestCoordinatedStepFourFiltersFirst(t *testing.T) {
	t.Parallel()
	steady := func(r Row) Row {
		r.Steady, r.DriftPts, r.Coordinated = true, 0, true
		return r
	}
	light := steady(mrow("slots", five(61.5, 4), five(1.05, 0), 1000))
	honor := mrow("honor", five(63, 4), five(3, 0), 1000)
	honor.Steady, honor.DriftPts = true, 0
	heavy := steady(mrow("pace", five(63, 4), five(1.3, 0), 1000))
	g := judgeOne(t, noneRow(five(60, 4)), honor, light, heavy)
	if picked(g) != "honor" || len(g.CoordinatedPick) != 1 || g.Coordinated[g.CoordinatedPick[0]].Policy != "pace" {
		t.Fatalf("recommended %q; coordinated slots (+1.5 pp, 1.05 attempts) and pace (+3 pp, 1.3): picked %v: %s", picked(g), g.CoordinatedPick, g.coordinatedLine())
	}
}
