package policylab

import (
	"strings"
	"testing"
)

// vrow is a row of one group (1.5x, 16 clients) with what the verdict
// reads: goodput and its spread, attempts and 429s per success.
func vrow(policy string, goodput, lo, hi, att, r429 float64) Row {
	r := Row{Policy: policy, Models: models[policy], Load: "1.5x", LoadX: 1.5, Clients: 16, Requests: 1000, Succeeded: int(goodput * 100),
		GoodputPerS: goodput, GoodputMin: lo, GoodputMax: hi, AttemptsPerSuccess: att, HTTP429PerSuccess: r429,
		SuccessPct: goodput * 10, SuccessPctMin: lo * 10, SuccessPctMax: hi * 10, CapacitySharePct: goodput / 5.4 * 100,
		E2EP50MS: 100, E2EP99MS: 1000, E2EMaxMS: 2000}
	if goodput == 0 {
		r.Succeeded, r.AttemptsPerSuccess, r.HTTP429PerSuccess = 0, -1, -1
	}
	return r
}

func judgeOne(t *testing.T, rows ...Row) *Group {
	t.Helper()
	gs := Judge(Sweep{Rows: rows})
	if len(gs) != 1 {
		t.Fatalf("%d groups", len(gs))
	}
	return &gs[0]
}

func order(g *Group) string {
	var s []string
	for _, p := range g.Ranked {
		s = append(s, p.RankLabel()+" "+p.Policy)
	}
	return strings.Join(s, ", ")
}

// TestRanking: goodput first; a row whose spread overlaps the leader's is
// a tie, ordered by attempts per success; a policy never leads on
// success alone; rows without a success come last.
func TestRanking(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		name  string
		rows  []Row
		order string
	}{
		{"apart", []Row{vrow("a", 4, 3.9, 4.1, 1, 0), vrow("b", 5, 4.9, 5.1, 3, 2)}, "1 b, 2 a"},
		{"a tie goes to fewer attempts, whatever the success",
			[]Row{vrow("many", 5.1, 4.9, 5.3, 6, 5), vrow("few", 5, 4.8, 5.2, 1.1, 0.1), vrow("low", 3, 2.9, 3.1, 1, 0)},
			"=1 few, =1 many, 3 low"},
		{"a tie is judged against its leader, then the next starts",
			[]Row{vrow("a", 5, 4.8, 5.2, 2, 1), vrow("b", 4.85, 4.7, 4.95, 1, 0), vrow("c", 4.6, 4.5, 4.75, 1.5, 0.5), vrow("d", 4.5, 4.4, 4.6, 3, 2)},
			"=1 b, =1 a, =3 c, =3 d"},
		{"no success last", []Row{vrow("zero", 0, 0, 0, -1, -1), vrow("one", 0.1, 0.05, 0.2, 9, 8)}, "1 one, 2 zero"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			if got := order(judgeOne(t, tt.rows...)); got != tt.order {
				t.Errorf("ranked %s, want %s", got, tt.order)
			}
		})
	}
}

// TestRecommendation: the fair policy with the most goodput, or one tied
// with it that needs fewer attempts per success; never a modelled one.
func TestRecommendation(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		name, want string
		ties       string
		rows       []Row
	}{
		{"fewest attempts within the spread", "pace", "budget",
			[]Row{vrow("budget", 5.5, 5.3, 5.6, 3.4, 2.4), vrow("pace", 5.3, 5.2, 5.4, 1.08, 0.08), vrow("backoff", 4.6, 4.5, 4.8, 5, 4)}},
		{"more goodput beyond the spread wins over fewer attempts", "budget", "",
			[]Row{vrow("budget", 5.5, 5.45, 5.6, 3.4, 2.4), vrow("pace", 5.3, 5.2, 5.4, 1.08, 0.08)}},
		{"at equal cost, more goodput", "slots", "pace",
			[]Row{vrow("pace", 5.2, 5.0, 5.4, 1.1, 0.1), vrow("slots", 5.3, 5.1, 5.5, 1.1, 0.1)}},
		{"a modelled client is never recommended", "honor", "",
			[]Row{vrow("sdk", 6, 5.9, 6.1, 1.2, 0.2), vrow("honor", 4, 3.9, 4.1, 4, 3)}},
		{"nothing fair succeeded", "", "",
			[]Row{vrow("sdk", 6, 5.9, 6.1, 1.2, 0.2), vrow("honor", 0, 0, 0, -1, -1)}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			g := judgeOne(t, tt.rows...)
			got := ""
			if r := g.Recommendation(); r != nil {
				got = r.Policy
			}
			if got != tt.want || strings.Join(g.Ties, ",") != tt.ties {
				t.Errorf("recommended %q tied with %q, want %q tied with %q", got, g.Ties, tt.want, tt.ties)
			}
			if tt.want == "" && !strings.Contains(g.RecommendationSentence(), "nothing to recommend") {
				t.Errorf("sentence %q", g.RecommendationSentence())
			}
		})
	}
}

// TestFindings: each part of the rule confirmed, contradicted, without a
// clear difference, or not tested, from the numbers present, and its
// sentence carries them.
func TestFindings(t *testing.T) {
	t.Parallel()
	base := []Row{vrow("none", 2, 1.9, 2.1, 1, 0)}
	for _, tt := range []struct {
		name string
		rule string
		rows []Row
		want Outcome
		says []string
	}{
		{"one owner confirmed: the same goodput for more attempts", "a",
			[]Row{vrow("sdk", 3, 2.9, 3.1, 2, 1), vrow("stacked", 3.05, 2.95, 3.15, 5, 4)}, Confirmed,
			[]string{"stacked owners cost 2.5× the attempts per success of sdk", "+0.5 pp success"}},
		{"one owner contradicted: the second owner bought goodput", "a",
			[]Row{vrow("sdk", 3, 2.9, 3.1, 2, 1), vrow("stacked", 4, 3.9, 4.1, 5, 4)}, Contradicted, []string{"+10 pp"}},
		{"one owner without stacked", "a", []Row{vrow("sdk", 3, 2.9, 3.1, 2, 1)}, NotTested, []string{"stacked did not run"}},
		{"honour the header against the best header-blind policy", "b",
			[]Row{vrow("honor", 4, 3.9, 4.1, 3, 2), vrow("fixed:1s", 3, 2.9, 3.1, 2, 1), vrow("poll:250ms", 4.5, 4.4, 4.6, 20, 19)},
			Contradicted, []string{"(poll:250ms)", "goodput 4 against 4.5/s", "attempts per success 3 against 20"}},
		{"honour the header confirmed", "b",
			[]Row{vrow("honor", 4, 3.9, 4.1, 3, 2), vrow("backoff", 4, 3.9, 4.1, 4, 3)}, Confirmed, []string{"(backoff)"}},
		{"honour the header without a header-blind policy", "b",
			[]Row{vrow("honor", 4, 3.9, 4.1, 3, 2)}, NotTested, []string{"any of backoff, fixed:D, poll:D did not run"}},
		{"jitter confirmed", "c",
			[]Row{vrow("honor", 4, 3.9, 4.1, 3, 1), vrow("honor-no-jitter", 4, 3.9, 4.1, 4, 2)}, Confirmed,
			[]string{"429s per success from 2 to 1"}},
		{"jitter inside the tolerance", "c",
			[]Row{vrow("honor", 4, 3.9, 4.1, 3, 1.0), vrow("honor-no-jitter", 4, 3.9, 4.1, 3, 1.02)}, NoClearDifference, nil},
		{"jitter contradicted", "c",
			[]Row{vrow("honor", 4, 3.9, 4.1, 3, 2), vrow("honor-no-jitter", 4, 3.9, 4.1, 3, 1)}, Contradicted, nil},
		{"redirect only when required: the same success, fewer redirects", "d",
			[]Row{redirected(vrow("budget", 4, 3.9, 4.1, 2, 1), 50), redirected(vrow("redirect", 4, 3.9, 4.1, 1.5, 0.5), 400)},
			Confirmed, []string{"redirected 5% against 40% of requests"}},
		{"redirect only when required contradicted", "d",
			[]Row{redirected(vrow("budget", 4, 3.9, 4.1, 2, 1), 50), redirected(vrow("redirect", 5, 4.9, 5.1, 1.5, 0.5), 400)},
			Contradicted, []string{"success 40% against 50%"}},
		{"give up in a controlled way", "e",
			[]Row{vrow("pace", 4, 3.9, 4.1, 1.1, 0.1)}, Confirmed, []string{"pace left 0% of its requests answered past their budget"}},
		{"give up past the budget", "e",
			[]Row{overBudget(vrow("pace", 4, 3.9, 4.1, 1.1, 0.1), 30)}, Contradicted, []string{"3%"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			g := judgeOne(t, append(append([]Row(nil), base...), tt.rows...)...)
			var f *Finding
			for i := range g.Findings {
				if g.Findings[i].Rule.Key == tt.rule {
					f = &g.Findings[i]
				}
			}
			if f == nil {
				t.Fatalf("no finding %s", tt.rule)
			}
			if f.Outcome != tt.want {
				t.Errorf("%s, want %s: %s", f.Outcome, tt.want, f.Sentence)
			}
			line := findingLine(*f)
			if !strings.Contains(line, " — "+tt.want.String()+": ") {
				t.Errorf("the line does not say %s: %s", tt.want, line)
			}
			for _, s := range tt.says {
				if !strings.Contains(f.Sentence, s) {
					t.Errorf("sentence lacks %q: %s", s, f.Sentence)
				}
			}
		})
	}
}

func redirected(r Row, n int) Row { r.Redirected = n; return r }
func overBudget(r Row, n int) Row { r.OverBudget = n; return r }

// TestJudgeGroups: groups in the order the rows first name them, one per
// (load, clients).
func TestJudgeGroups(t *testing.T) {
	t.Parallel()
	a, b := vrow("honor", 4, 3.9, 4.1, 3, 2), vrow("honor", 4, 3.9, 4.1, 3, 2)
	b.Load = "3x"
	c := a
	c.Clients = 4
	var names []string
	for _, g := range Judge(Sweep{Rows: []Row{a, b, c, vrow("pace", 5, 4.9, 5.1, 1, 0)}}) {
		names = append(names, g.Name()+":"+order(&g))
	}
	if got := strings.Join(names, "; "); got != "1.5x, 16 clients:1 pace, 2 honor; 3x, 16 clients:1 honor; 1.5x, 4 clients:1 honor" {
		t.Errorf("groups %s", got)
	}
}

// TestAmbition: past capacity, the closing note says whether the
// recommendation reached the ambition, and who did when it did not.
func TestAmbition(t *testing.T) {
	t.Parallel()
	fair := func(r Row) Row { r.Budget = AmbitionBudget; return r }
	pace := fair(vrow("pace", 5.2, 5.1, 5.3, 1.05, 0.05)) // 96.3% of 5.4/s
	for _, tt := range []struct {
		name string
		rows []Row
		want string
	}{
		{"reached", []Row{pace, fair(vrow("honor", 4, 3.9, 4.1, 6, 5))}, "reached: pace 96.3% at 1.05 (0 early)."},
		{"reached by another", []Row{pace, fair(vrow("redirect", 6, 5.9, 6.1, 1.4, 0.4))},
			"not reached by the recommendation; reached by pace, with less goodput. Each fair policy's capacity share at its attempts per success: redirect 111.1% at 1.4 (0 early); pace 96.3% at 1.05 (0 early)."},
		{"early retries miss it", []Row{func() Row { r := pace; r.EarlyRetries = 2; return r }()}, "not reached by the recommendation. Each"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got, ok := judgeOne(t, tt.rows...).AmbitionSentence()
			if !ok || !strings.HasPrefix(got, tt.want) {
				t.Errorf("%q, want %q", got, tt.want)
			}
		})
	}
	under := pace
	under.LoadX = 0.8
	if _, ok := judgeOne(t, under).AmbitionSentence(); ok {
		t.Error("an ambition under capacity")
	}
}
