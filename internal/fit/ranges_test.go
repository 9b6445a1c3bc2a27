package fit

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/ptuprobe/ptuprobe/sim"
)

// TestRangesFromTheTriedPoints: a good fit's ranges span the tried points
// the judgement calls good, and no other; a poor one's, the points within
// rangeSlack of its objective; an insufficient one's, the points not
// judged poor. They are written as the settings are: a
// duration as Go writes one, a burst-pct as its percent (not the
// allowance it is searched as), a cold forecast off as its range's top.
func TestRangesFromTheTriedPoints(t *testing.T) {
	t.Parallel()
	params := paramsOf(sim.ProfilePTU)
	pts := &triedPoints{m: map[string]tried{}}
	// ptu, bucket-depth, burst-pct, burst-refill, cold-drain-pct, cold-after
	pts.add("a", tried{values: []float64{240, 2, 150, 60, 100, 1}, objective: 0.10, quality: sim.FitGood})
	pts.add("b", tried{values: []float64{260, 2.5, 140, 3000, 100, 1}, objective: 0.20, quality: sim.FitGood})
	pts.add("c", tried{values: []float64{900, 0.1, 5000, 1, 20, 1}, objective: 0.12, quality: sim.FitPoor})
	at := []float64{250, 2, 150, 120, 100, 1}
	good := valueRanges(at, score{objective: 0.10}, sim.FitGood, pts)
	if good[0] != [2]float64{240, 260} || good[3] != [2]float64{60, 3000} {
		t.Fatalf("good fit's ranges %v", good)
	}
	poor := valueRanges(at, score{objective: 0.10}, sim.FitPoor, pts)
	// An insufficient fit's: every point not judged poor (a and b).
	if r := valueRanges(at, score{objective: 0.10}, sim.FitInsufficient, pts); r[0] != [2]float64{240, 260} {
		t.Errorf("insufficient fit's ranges %v", r)
	}
	if poor[0] != [2]float64{240, 900} || poor[3] != [2]float64{1, 120} {
		t.Fatalf("poor fit's ranges (within %v of 0.10: a and c) %v", rangeSlack, poor)
	}
	w, err := settingRanges(params, good)
	if err != nil {
		t.Fatal(err)
	}
	b, err := json.Marshal(w)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{`"ptu":[240,260]`, `"bucket-depth":["2s","2.5s"]`, `"burst-pct":[140,150]`, `"burst-refill":["1m0s","50m0s"]`, `"cold-drain-pct":[100,100]`} {
		if !strings.Contains(string(b), want) {
			t.Errorf("ranges %s: no %s", b, want)
		}
	}
	if strings.Contains(string(b), phaseParam) {
		t.Errorf("ranges %s: phase is not a setting", b)
	}
}

// TestProfileKeepsRanges: a profile's fit.ranges survive the file, and a
// range of an unknown key or of the wrong type is refused.
func TestProfileKeepsRanges(t *testing.T) {
	t.Parallel()
	p := sim.Profile{Name: "twin", Config: sim.DefaultConfig(), Fit: &sim.Fit{Quality: sim.FitGood, Threshold: 0.15, Source: "replay", Model: "ptu",
		Ranges: map[string][2]json.RawMessage{"ptu": {json.RawMessage("250"), json.RawMessage("330")}, "bucket-depth": {json.RawMessage(`"1s"`), json.RawMessage(`"3s"`)}}}}
	var b strings.Builder
	if err := sim.WriteProfile(&b, p); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(b.String(), `"bucket-depth": [`) {
		t.Fatalf("no ranges written:\n%s", b.String())
	}
	back, err := sim.ReadProfile(strings.NewReader(b.String()))
	if err != nil {
		t.Fatal(err)
	}
	if got := string(back.Fit.Ranges["bucket-depth"][1]); got != `"3s"` {
		t.Errorf("bucket-depth's range's top read back %s", got)
	}
	for _, bad := range []map[string][2]json.RawMessage{
		{"nope": {json.RawMessage("1"), json.RawMessage("2")}},
		{"bucket-depth": {json.RawMessage("1"), json.RawMessage("2")}},
	} {
		q := p
		f := *p.Fit
		f.Ranges, q.Fit = bad, &f
		var doc strings.Builder
		if err := sim.WriteProfile(&doc, q); err != nil {
			t.Fatal(err)
		}
		if _, err := sim.ReadProfile(strings.NewReader(doc.String())); err == nil || !strings.Contains(err.Error(), "ranges") {
			t.Errorf("ranges %s: read with %v", bad, err)
		}
	}
}

// TestFmtSetting: a suggestion's ends are written as their flags take
// them: 100 stays 100 (not "1": trailing zeros of an integer kept), a
// duration as Go writes one.
func TestFmtSetting(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name string
		v    float64
		want string
	}{{"cold-drain-pct", 100, "100"}, {"ptu", 78090.4, "78090"}, {"burst-pct", 0.13791, "0.1379"}, {"bucket-depth", 6.597, "6.597s"}} {
		if got := fmtSetting(c.name, c.v); got != c.want {
			t.Errorf("fmtSetting(%s, %v) = %q, want %q", c.name, c.v, got, c.want)
		}
	}
}

// TestEdgesBisected: the ranges' scan finds a range's edge to within a
// factor of 2 of its distance (its doubling steps); bisecting between
// the farthest step that fits and the next one out finds it to within
// 9%. Here the points that fit are 0.3 to 0.6 of one parameter's range,
// the best at 0.5: the scan alone reaches 0.34 and 0.58 (served target
// b's bucket depth: a range of 85–496 ms, the truth's 500 ms outside it,
// then 83–664 ms).
func TestEdgesBisected(t *testing.T) {
	t.Parallel()
	j := Job{Threshold: DefaultThreshold, MinAgreement: DefaultMinAgreement}
	f := &fitter{job: &j}
	for _, noScan := range []bool{false, true} {
		pts := &triedPoints{m: map[string]tried{}}
		s := &search{n: 1, b: budget{noScan: noScan}, key: func(u []float64) string { return fmt.Sprint(u) }}
		s.eval = func(_ context.Context, u []float64) (float64, error) {
			q := sim.FitPoor
			if u[0] >= 0.3 && u[0] <= 0.6 {
				q = sim.FitInsufficient
			}
			pts.add(s.key(u), tried{u: slices.Clone(u), values: slices.Clone(u), quality: q})
			return 0, nil
		}
		s.memo = map[string]float64{}
		// The best is insufficient (a score of no groups): a point fits
		// when it is not poor.
		r, err := f.scanRanges(t.Context(), s, []float64{0.5}, []float64{0.5}, score{agreement: -1}, pts)
		if err != nil {
			t.Fatal(err)
		}
		t.Logf("noScan %v: range %v", noScan, r[0])
		switch {
		case noScan && r[0] != [2]float64{0.5, 0.5}:
			t.Errorf("without the scan the range is the best point's: %v", r[0])
		case !noScan && (r[0][0] > 0.315 || r[0][0] < 0.3 || r[0][1] < 0.59 || r[0][1] > 0.6):
			t.Errorf("range %v, want its edges within 0.3–0.315 and 0.59–0.6", r[0])
		}
	}
}
