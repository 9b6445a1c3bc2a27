package fit

import (
	"context"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ptuprobe/ptuprobe/client"
	"github.com/ptuprobe/ptuprobe/internal/testkit"
	"github.com/ptuprobe/ptuprobe/internal/valid"
	"github.com/ptuprobe/ptuprobe/results"
	"github.com/ptuprobe/ptuprobe/sim"
)

// writeRecords writes rows to a results file of its own.
func writeRecords(t *testing.T, recs []results.Record) string {
	t.Helper()
	out := filepath.Join(t.TempDir(), "rows.csv")
	testkit.WriteResults(t, out, recs...)
	return out
}

// job is a fit of files with the defaults, on budget b.
func job(t *testing.T, b budget, files ...string) Job {
	t.Helper()
	j := Job{Threshold: DefaultThreshold, MinAgreement: DefaultMinAgreement, MaxWork: DefaultMaxWork,
		PromptTokens: client.DefaultPromptTokens, MaxTokens: client.DefaultMaxTokens, budget: b}
	for _, f := range files {
		fh, err := os.Open(f)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { fh.Close() })
		j.inputs = append(j.inputs, input{Name: filepath.Base(f), R: fh})
	}
	return j
}

func profileText(t *testing.T, r Result) string {
	t.Helper()
	var b strings.Builder
	if err := sim.WriteProfile(&b, r.Profile); err != nil {
		t.Fatal(err)
	}
	return b.String()
}

// TestBoundsAreClients: the cells' bounds are the client's request's.
func TestBoundsAreClients(t *testing.T) {
	t.Parallel()
	if maxPromptTokens != client.MaxPromptTokens || maxCompletionTokens != client.MaxCompletionTokens || maxLatency != client.MaxTimeout {
		t.Errorf("bounds %d %d %v, client's %d %d %v", maxPromptTokens, maxCompletionTokens, maxLatency,
			client.MaxPromptTokens, client.MaxCompletionTokens, client.MaxTimeout)
	}
}

// TestRowOrderDoesNotMatter: the same rows in reverse order give the same
// twin, byte for byte (issue 35: the plans were replayed in the order of
// their first row, so a reversed file replayed the schedule first, and a
// good twin became poor).
func TestRowOrderDoesNotMatter(t *testing.T) {
	t.Parallel()
	recs := testkit.ReadRecords(t, hiddenRun(t))
	forward := writeRecords(t, recs)
	slices.Reverse(recs)
	backward := writeRecords(t, recs)
	// The plans' order is every model's: one model shows it.
	ja, jb := job(t, fixedPoint, forward), job(t, fixedPoint, backward)
	ja.models, jb.models = []string{sim.ProfilePTU}, []string{sim.ProfilePTU}
	a, err := Run(t.Context(), ja)
	if err != nil {
		t.Fatal(err)
	}
	b, err := Run(t.Context(), jb)
	if err != nil {
		t.Fatal(err)
	}
	if pa, pb := profileText(t, a), profileText(t, b); pa != pb {
		t.Fatalf("the rows reversed give another twin:\n%s\n%s", pa, pb)
	}
}

// TestDuplicatesWarned: a file whose rows are all there twice is fitted,
// with a warning that counts the repeats.
func TestDuplicatesWarned(t *testing.T) {
	t.Parallel()
	recs := testkit.ReadRecords(t, hiddenRun(t))
	sent := 0
	for i := range recs {
		if !recs[i].NotSent() {
			sent++
		}
	}
	file := writeRecords(t, append(slices.Clone(recs), recs...))
	j := job(t, fixedPoint, file)
	var warned []string
	j.Warn = func(msg string) { warned = append(warned, msg) }
	j.models = []string{sim.ProfilePTU}
	if _, err := Run(t.Context(), j); err != nil {
		t.Fatal(err)
	}
	if len(warned) != 1 || !strings.HasPrefix(warned[0], strconv.Itoa(sent)+" rows repeat a row already read") {
		t.Fatalf("warnings %q, want one counting %d rows", warned, sent)
	}
}

// TestMaxWork: a fit whose replays would pass the cap is refused before
// any replay, naming the estimate; reading stops at the cap, so a file's
// size takes no more memory than the cap allows.
func TestMaxWork(t *testing.T) {
	t.Parallel()
	file := hiddenRun(t)
	j := job(t, tiny, file)
	j.MaxWork = 1000
	var st progress
	j.status = &st
	_, err := Run(t.Context(), j)
	var v *valid.Error
	if !errors.As(err, &v) || v.Field() != "MaxWork" || !strings.Contains(err.Error(), "the results hold more than") {
		t.Fatalf("error %v, want one of MaxWork", err)
	}
	if s := st.Snapshot(); s.Done != 0 || s.Model != "" {
		t.Errorf("%d points tried (%q) before the refusal", s.Done, s.Model)
	}
}

// TestCellsPastBounds: a sent row past the replay's bounds is refused,
// naming its file, row and cell (issue 35: prompt_tokens 2^63−1 panicked
// in strings.Repeat, 10^9 ran out of memory; latency_ms 9.3·10^12
// overflowed the latency model).
func TestCellsPastBounds(t *testing.T) {
	t.Parallel()
	recs := testkit.ReadRecords(t, hiddenRun(t))
	ok := slices.IndexFunc(recs, func(r results.Record) bool { return r.Status == 200 && r.CompletionTokens >= 0 })
	for _, c := range []struct {
		name string
		set  func(*results.Record)
		want string
	}{
		{"prompt 1e9", func(r *results.Record) { r.PromptTokens = 1_000_000_000 }, "prompt_tokens 1000000000: at most 1000000"},
		{"prompt 2^63-1", func(r *results.Record) { r.PromptTokens = 1<<63 - 1 }, "prompt_tokens 9223372036854775807"},
		{"latency", func(r *results.Record) { r.LatencyMS = 9.3e12 }, "latency_ms 9.3e+12: an attempt lasts at most"},
		{"sent", func(r *results.Record) { r.SentMS = 1e14 }, "sent_ms 1e+14"},
		{"completion", func(r *results.Record) { r.CompletionTokens = 2_000_000 }, "completion_tokens 2000000"},
	} {
		bad := slices.Clone(recs)
		c.set(&bad[ok])
		_, err := Run(t.Context(), job(t, tiny, writeRecords(t, bad)))
		want := "rows.csv row " + strconv.Itoa(ok+1) + ": " + c.want
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: %v, want %q", c.name, err, want)
		}
	}
}

// TestCancelStopsTheBatch: once the context is canceled, a batch replays
// no point it has not started (issue 35: the search replayed every point
// left in its batch, 238 s on a file of 10^6 rows).
func TestCancelStopsTheBatch(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var evals atomic.Int64
	s := search{n: 2, b: budget{global: 50, starts: 1, simplex: 6, passes: 1},
		eval: func(context.Context, []float64) (float64, error) {
			evals.Add(1) // the first call cancels
			cancel()
			return 0, nil
		},
		key: func(u []float64) string { return fmt.Sprint(u) },
	}
	_, _, err := s.run(ctx, []float64{0.5, 0.5})
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("error %v, want canceled", err)
	}
	// The workers already past their check may each finish one point.
	// The workers already in a replay when it came finish theirs.
	if n := evals.Load(); n > int64(runtime.GOMAXPROCS(0)) {
		t.Errorf("%d points replayed, of 101: the cancel came at the first", n)
	}
}

// TestReportTicks: the progress says the rows read while the files are
// read, then the points tried, one line a tick, and nothing after the
// context ends.
func TestReportTicks(t *testing.T) {
	t.Parallel()
	var st progress
	tick := make(chan time.Time)
	var b strings.Builder // written by report alone, read once it returns
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		report(ctx, &b, &st, tick)
	}()
	st.rows.Store(12_288)
	tick <- time.Time{}
	model := sim.ProfileGateway
	st.model.Store(&model)
	st.total.Store(1900)
	st.done.Store(40)
	tick <- time.Time{}
	tick <- time.Time{} // the next tick waits for the second line to be written
	cancel()
	<-done
	want := "fit: reading the results: 12,288 rows\nfit: 40 of about 1,900 points tried (gateway model)\n"
	if got := b.String(); !strings.HasPrefix(got, want) {
		t.Errorf("progress:\n%s\nwant it to start with:\n%s", got, want)
	}
}

// TestArrivals: a served run's sends are replayed when the deployment
// decided them: a refusal at its recorded latency after its send, an
// admitted send by the median latency of its second's refusals, a send
// of a second without refusals where it was sent; then in order again. A
// run on the virtual clock (refusals answered in no time) is unmoved.
func TestArrivals(t *testing.T) {
	ms := func(v float64) time.Duration { return time.Duration(v * float64(time.Millisecond)) }
	s := []send{
		{At: ms(4000), seq: 1},                                // admitted: the median of its second's refusals, 12
		{At: ms(4000.5), Refused: true, answered: 15, seq: 2}, // decided at 4,015.5: after the next two
		{At: ms(4001), Refused: true, answered: 5, seq: 3},    // 4,006
		{At: ms(4001.5), Refused: true, answered: 12, seq: 4}, // 4,013.5
		{At: ms(5200), seq: 5},                                // a second without refusals: unmoved
		{At: ms(6000), Refused: true, answered: 0, seq: 6},    // the virtual clock's: unmoved
		{At: ms(6000), seq: 7},                                // admitted at one instant: before the refusal
	}
	arrivals(s)
	var got []float64
	var order []int
	for _, snd := range s {
		got = append(got, float64(snd.At)/float64(time.Millisecond))
		order = append(order, snd.seq)
	}
	want, wantOrder := []float64{4006, 4012, 4013.5, 4015.5, 5200, 6000, 6000}, []int{3, 1, 4, 2, 5, 7, 6}
	if !slices.Equal(got, want) || !slices.Equal(order, wantOrder) {
		t.Fatalf("arrivals %v (seq %v), want %v (%v)", got, order, want, wantOrder)
	}
}

// TestSendsCarryCompletions: the admitted sends of one instant are
// replayed with that instant's recorded completions, ascending (which
// of them drew which is not recorded); a refused one with none (the
// twin draws it).
func TestSendsCarryCompletions(t *testing.T) {
	t.Parallel()
	file := hiddenRun(t)
	want := map[string]int{}
	for _, r := range testkit.ReadRecords(t, file) {
		if !r.NotSent() {
			c := 0
			if r.Status == 200 {
				c = r.CompletionTokens
			}
			want[fmt.Sprint(r.Group, r.Seq, r.Attempt)] = c
		}
	}
	f, err := os.Open(file)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	s, err := fromResults(t.Context(), []input{{Name: "r.csv", R: f}}, client.DefaultPromptTokens, client.DefaultMaxTokens, 0, nil)
	if err != nil {
		t.Fatal(err)
	}
	n, admitted := 0, 0
	for _, run := range s.Runs {
		for _, p := range run.Plans {
			got, recorded := map[time.Duration][]int{}, map[time.Duration][]int{}
			for _, snd := range p.Sends {
				n++
				w := want[fmt.Sprint(snd.Group, snd.seq, snd.attempt)]
				if snd.Refused != (w == 0) || snd.Refused && snd.completion != 0 {
					t.Fatalf("%s seq %d: completion %d refused %v, recorded %d", snd.Group, snd.seq, snd.completion, snd.Refused, w)
				}
				if !snd.Refused {
					admitted++
					got[snd.At] = append(got[snd.At], snd.completion)
					recorded[snd.At] = append(recorded[snd.At], w)
				}
			}
			for at, g := range got {
				r := slices.Sorted(slices.Values(recorded[at]))
				if !slices.IsSorted(g) || !slices.Equal(g, r) {
					t.Fatalf("at %v: completions %v, want the recorded %v ascending", at, g, r)
				}
			}
		}
	}
	if n != len(want) || admitted == 0 {
		t.Fatalf("%d sends (%d admitted), want %d", n, admitted, len(want))
	}
}

// TestHopsReachABasinNearby: the hops (an iterated local search of
// small steps around the best) reach a minimum 6% away from the start
// in two settings at once, which the search's other stages on this
// budget do not move to; the same budget without hops stays at the
// start. The objective is the distance, in decades, from the minimum.
func TestHopsReachABasinNearby(t *testing.T) {
	t.Parallel()
	span := math.Log(1e5) // a row of 1 – 100,000 on a log scale
	target := []float64{0.5 + math.Log(1.06)/span, 0.5 + math.Log(1.06)/span}
	for _, hops := range []int{0, 8} {
		s := search{n: 2, b: budget{starts: 1, hops: hops, hopEval: 40}, logSpan: []float64{span, span},
			eval: func(_ context.Context, u []float64) (float64, error) {
				return (math.Abs(u[0]-target[0]) + math.Abs(u[1]-target[1])) * span / math.Ln10, nil
			},
			key: func(u []float64) string { return fmt.Sprint(u) },
		}
		_, sc, err := s.run(t.Context(), []float64{0.5, 0.5})
		if err != nil {
			t.Fatal(err)
		}
		t.Logf("hops %d: %.4f decades from the minimum", hops, sc)
		if hops == 0 && sc < 0.04 || hops > 0 && sc > 0.002 {
			t.Errorf("hops %d: ended %.4f decades from the minimum", hops, sc)
		}
	}
}
