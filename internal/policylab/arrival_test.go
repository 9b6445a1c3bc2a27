package policylab

import (
	"bytes"
	"context"
	"github.com/ptuprobe/ptuprobe/internal/testkit"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/ptuprobe/ptuprobe/results"
)

func TestParseArrival(t *testing.T) {
	t.Parallel()
	good := []struct {
		in   string
		want Arrival
	}{
		{"poisson", Arrival{Kind: arrivalPoisson}},
		{"constant", Arrival{Kind: arrivalConstant}},
		{"waves", Arrival{Kind: arrivalWaves}},
		{"waves:40", Arrival{Kind: arrivalWaves, Size: 40}},
		{"waves:@1500ms", Arrival{Kind: arrivalWaves, Gap: 1500 * time.Millisecond}},
		{"waves:40@2s", Arrival{Kind: arrivalWaves, Size: 40, Gap: 2 * time.Second}},
		{"gamma:2", Arrival{Kind: arrivalGamma, CV: 2}},
		{"gamma:0.5", Arrival{Kind: arrivalGamma, CV: 0.5}},
	}
	for _, tc := range good {
		got, err := ParseArrival(tc.in)
		if err != nil || got.Kind != tc.want.Kind || got.Size != tc.want.Size || got.Gap != tc.want.Gap || got.CV != tc.want.CV {
			t.Errorf("ParseArrival(%q) = %+v, %v; want %+v", tc.in, got, err, tc.want)
		}
	}
	for _, in := range []string{"", "Poisson", "poisson:2", "waves:", "waves:0", "waves:-3", "waves:4x", "waves:@", "waves:@0s",
		"waves:3@2h", "waves:@soon", "replay", "replay:", "replay:/no/such/file.csv", "bursts", "gamma", "gamma:0", "gamma:x"} {
		if a, err := ParseArrival(in); err == nil {
			t.Errorf("ParseArrival(%q) = %+v; want an error", in, a)
		} else if strings.Contains(err.Error(), "\n") {
			t.Errorf("ParseArrival(%q): %q is more than one line", in, err)
		}
	}
}

// TestWavesCarryTheLoad: whatever the waves' form, the requests of a wave
// come at one instant, the waves evenly apart, and the plan's mean rate is
// the load's.
func TestWavesCarryTheLoad(t *testing.T) {
	t.Parallel()
	const rate, plan = 7.5, 60 * time.Second
	for _, tc := range []struct {
		a        Arrival
		size     int
		gap      time.Duration
		describe string
	}{
		{Arrival{Kind: arrivalWaves}, 15, 2 * time.Second, "about every 2s"},
		{Arrival{Kind: arrivalWaves, Size: 30}, 30, 4 * time.Second, "waves of 30 requests"},
		{Arrival{Kind: arrivalWaves, Gap: time.Second}, 8, 1066666666, "about every 1s"}, // 8 ÷ 7.5/s
		{Arrival{Kind: arrivalWaves, Size: 15, Gap: 2 * time.Second}, 15, 2 * time.Second, "waves of 15 requests at once every 2s"},
	} {
		got := tc.a.offsets(rate, plan, 1)
		var waves []time.Duration
		for i, at := range got {
			if i%tc.size == 0 {
				waves = append(waves, at)
			} else if at != waves[len(waves)-1] {
				t.Fatalf("%+v: arrival %d at %v, not with its wave at %v", tc.a, i, at, waves[len(waves)-1])
			}
		}
		for i := 1; i < len(waves); i++ {
			if d := waves[i] - waves[i-1]; d != tc.gap && d != tc.gap+1 && d != tc.gap-1 {
				t.Fatalf("%+v: waves %v apart, want %v", tc.a, d, tc.gap)
			}
		}
		if r := float64(len(got)) / plan.Seconds(); r < 0.97*rate || r > 1.03*rate {
			t.Errorf("%+v: %d arrivals in %v is %.2f/s, want the load's %.2f/s", tc.a, len(got), plan, r, rate)
		}
		if d := tc.a.Describe(); !strings.Contains(d, tc.describe) {
			t.Errorf("%+v: described %q, want it to say %q", tc.a, d, tc.describe)
		}
	}
}

// TestWavesOfBothSizeAndGapMustBeTheLoad: a size and a gap together fix a
// rate; a load of another rate is refused, naming the fix.
func TestWavesOfBothSizeAndGapMustBeTheLoad(t *testing.T) {
	t.Parallel()
	l := smallLab(t, "ptu", "honor")
	l.Loads = []Load{{Text: "20/s", Rate: 20}}
	l.Arrival = Arrival{Kind: arrivalWaves, Size: 40, Gap: 2 * time.Second}
	if err := l.Validate(); err != nil {
		t.Fatalf("waves:40@2s at 20/s: %v", err)
	}
	l.Loads = []Load{{Text: "1.5x", X: 1.5}}
	err := l.Validate()
	if err == nil || !strings.Contains(err.Error(), "waves:40 or waves:@2s") {
		t.Fatalf("waves:40@2s at 1.5x: %v; want a refusal naming waves:40 or waves:@2s", err)
	}
}

// writeResults writes recs to a real results file in dir.
func writeResults(t *testing.T, dir string, recs []results.Record) string {
	t.Helper()
	path := filepath.Join(dir, "results.csv")
	testkit.WriteResults(t, path, recs...)
	return path
}

func row(run, shape, group string, attempt int, intended float64) results.Record {
	r := results.Blank()
	r.RunID, r.Shape, r.Group, r.Attempt, r.IntendedMS, r.SentMS, r.Status = run, shape, group, attempt, intended, intended, 200
	return r
}

// TestReplayKeepsTheRecordedShape: a results file's first attempts (its
// burst's waves, then its schedule, each timeline after the one before),
// retries passed over, replayed on a clock scaled to the load and
// repeated to fill the plan.
func TestReplayKeepsTheRecordedShape(t *testing.T) {
	t.Parallel()
	var recs []results.Record
	for w := range 2 { // two waves of 3, 1 s apart
		for range 3 {
			recs = append(recs, row("r1", "burst", "burst-shaped", 1, float64(1000*w)))
		}
	}
	recs = append(recs, row("r1", "burst", "burst-shaped", 2, 250)) // a retry: not an arrival
	for i := range 4 {                                              // a schedule at 2/s, on its own clock
		recs = append(recs, row("r1", "schedule", "scheduled-shaped", 1, float64(500*i)))
	}
	a, err := ParseArrival("replay:" + writeResults(t, t.TempDir(), recs))
	if err != nil {
		t.Fatal(err)
	}
	// The burst spans 1 s and its mean gap is 0.2 s, so the schedule
	// starts at 1.2 s; it spans 1.5 s, mean gap 0.5 s: the recording is
	// 3.2 s long with 10 arrivals.
	ms := func(v ...float64) []time.Duration {
		var out []time.Duration
		for _, x := range v {
			out = append(out, time.Duration(x*float64(time.Millisecond)))
		}
		return out
	}
	if want := ms(0, 0, 0, 1000, 1000, 1000, 1200, 1700, 2200, 2700); !slices.Equal(a.Replay, want) || a.Span != 3200*time.Millisecond || a.Source != "results.csv" {
		t.Fatalf("replay %v over %v from %q; want %v over 3.2s from results.csv", a.Replay, a.Span, a.Source, want)
	}
	// At the recorded rate (10 in 3.2 s) the clock is the recording's;
	// at twice it, half; a plan of 5 s repeats the recording.
	got := a.offsets(10/3.2, 5*time.Second, 1)
	if want := append(ms(0, 0, 0, 1000, 1000, 1000, 1200, 1700, 2200, 2700), ms(3200, 3200, 3200, 4200, 4200, 4200, 4400, 4900)...); !slices.Equal(got, want) {
		t.Errorf("at the recorded rate: %v; want %v", got, want)
	}
	if got := a.offsets(20/3.2, 1700*time.Millisecond, 1); !slices.Equal(got, ms(0, 0, 0, 500, 500, 500, 600, 850, 1100, 1350, 1600, 1600, 1600)) {
		t.Errorf("at twice the recorded rate: %v", got)
	}
	if d := a.Describe(); !strings.Contains(d, "replayed from results.csv: its 10 first attempts") {
		t.Errorf("described %q", d)
	}
}

func TestReplayRefusesWhatItCannotPlay(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	one := writeResults(t, dir, []results.Record{row("r", "burst", "burst-shaped", 1, 0)})
	if _, err := ParseArrival("replay:" + one); err == nil || !strings.Contains(err.Error(), "fewer than two") {
		t.Errorf("one arrival: %v; want a refusal", err)
	}
	foreign := filepath.Join(dir, "foreign.csv")
	if err := os.WriteFile(foreign, []byte("source,retry_after_ms\na,12\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := ParseArrival("replay:" + foreign); err == nil {
		t.Error("a foreign CSV: no error; want one (it has no intended times)")
	}
}

// TestLabRunsWaves: a lab on waves runs, and its method says so.
// TestReplayOfOneWaveIsWaves: a recording of one instant (a single wave)
// repeats as waves of its size at the load's rate.
func TestReplayOfOneWaveIsWaves(t *testing.T) {
	t.Parallel()
	wave := []results.Record{row("r", "burst", "burst-shaped", 1, 0), row("r", "burst", "burst-shaped", 1, 0)}
	a, err := ParseArrival("replay:" + writeResults(t, t.TempDir(), wave))
	if err != nil {
		t.Fatal(err)
	}
	got := a.offsets(4, 2*time.Second, 1)
	want := []time.Duration{0, 0, 500 * time.Millisecond, 500 * time.Millisecond, time.Second, time.Second, 1500 * time.Millisecond, 1500 * time.Millisecond}
	if !slices.Equal(got, want) {
		t.Errorf("one wave of 2 at 4/s: %v; want %v", got, want)
	}
}

func TestLabRunsWaves(t *testing.T) {
	t.Parallel()
	l := smallLab(t, "ptu", "honor")
	l.Loads, l.Duration = l.Loads[:1], 4*time.Second
	l.Warmup, l.Tail = time.Second, time.Second
	l.Arrival = Arrival{Kind: arrivalWaves, Size: 40}
	sw, err := runLab(context.Background(), l)
	if err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	if err := writeMarkdown(&b, sw); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(b.String(), "- Arrivals: waves of 40 requests at once") {
		t.Errorf("policies.md's method does not name the waves:\n%s", b.String())
	}
	if len(sw.Rows) == 0 || sw.Rows[0].Requests == 0 {
		t.Errorf("no requests offered: %+v", sw.Rows)
	}
}

func FuzzParseArrival(f *testing.F) {
	for _, s := range []string{"poisson", "waves", "waves:40@2s", "waves:@1s", "waves:7", "constant", "replay:", "gamma:2"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if strings.HasPrefix(s, "replay:") {
			return // reads a file: FuzzReadReplay fuzzes the reader
		}
		a, err := ParseArrival(s)
		if err != nil {
			return
		}
		if a.Kind == arrivalWaves {
			size, gap := a.waves(3.7)
			if size < 1 || gap <= 0 {
				t.Fatalf("%q: waves of %d every %v", s, size, gap)
			}
		}
	})
}

func FuzzReadReplay(f *testing.F) {
	var b bytes.Buffer
	w, _ := results.NewWriter(&b)
	for i := range 5 {
		r := row("r", "burst", "burst-shaped", 1, float64(100*i))
		_ = w.Write(&r)
	}
	f.Add(b.String())
	f.Add(strings.Join(results.Columns, ",") + "\n")
	f.Fuzz(func(t *testing.T, s string) {
		a, err := readReplay(strings.NewReader(s), "f.csv")
		if err != nil {
			return
		}
		if len(a.Replay) < 2 || a.Span <= 0 || !slices.IsSorted(a.Replay) || a.Replay[0] != 0 {
			t.Fatalf("replay %v over %v", a.Replay, a.Span)
		}
		for _, at := range a.offsets(5, 10*time.Second, 1) {
			if at < 0 || at >= 10*time.Second {
				t.Fatalf("offset %v outside the plan", at)
			}
		}
	})
}

// TestReplayReadsEveryTraceFormat: replay:FILE reads a production trace
// through internal/trace as it reads a results file.
func TestReplayReadsEveryTraceFormat(t *testing.T) {
	t.Parallel()
	file := filepath.Join(t.TempDir(), "mooncake.jsonl")
	text := "{\"timestamp\": 2000, \"input_length\": 5, \"output_length\": 1}\n{\"timestamp\": 0, \"input_length\": 5, \"output_length\": 1}\n{\"timestamp\": 500, \"input_length\": 5, \"output_length\": 1}\n"
	if err := os.WriteFile(file, []byte(text), 0o600); err != nil {
		t.Fatal(err)
	}
	a, err := ParseArrival("replay:" + file)
	if err != nil {
		t.Fatal(err)
	}
	if want := []time.Duration{0, 500 * time.Millisecond, 2 * time.Second}; !slices.Equal(a.Replay, want) || a.Span != 3*time.Second {
		t.Errorf("replay %v over %v; want %v over 3s", a.Replay, a.Span, want)
	}
	if d := a.Describe(); !strings.Contains(d, "its 3 rows' times (a mooncake trace)") {
		t.Errorf("described %q", d)
	}
}

// TestLabRunsGamma: a lab on gamma arrivals runs at the load's rate, and
// its method says so; the lab refuses a gamma without a CV it can play.
func TestLabRunsGamma(t *testing.T) {
	t.Parallel()
	l := smallLab(t, "ptu", "honor")
	l.Loads, l.Duration = l.Loads[:1], 4*time.Second
	l.Warmup, l.Tail = time.Second, time.Second
	l.Arrival = Arrival{Kind: arrivalGamma, CV: 3}
	sw, err := runLab(context.Background(), l)
	if err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	if err := writeMarkdown(&b, sw); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(b.String(), "- Arrivals: gamma (seeded gamma gaps, as vLLM's --burstiness) at each load's rate, the gaps' coefficient of variation 3") {
		t.Errorf("policies.md's method does not name the gamma process:\n%s", b.String())
	}
	if len(sw.Rows) == 0 || sw.Rows[0].Requests == 0 {
		t.Errorf("no requests offered: %+v", sw.Rows)
	}
	l.Arrival = Arrival{Kind: arrivalGamma}
	if err := l.Validate(); err == nil || !strings.Contains(err.Error(), "coefficient of variation") {
		t.Errorf("gamma of CV 0: %v", err)
	}
}
