package policylab

import (
	"context"
	"encoding/csv"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/ptuprobe/ptuprobe/sim"
)

// readCSV reads a file written by the lab into maps by column name.
func readCSV(t *testing.T, path string) []map[string]string {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	all, err := csv.NewReader(f).ReadAll()
	if err != nil || len(all) < 2 {
		t.Fatalf("%s: %d lines, %v", path, len(all), err)
	}
	var out []map[string]string
	for _, line := range all[1:] {
		m := map[string]string{}
		for i, name := range all[0] {
			m[name] = line[i]
		}
		out = append(out, m)
	}
	return out
}

// TestGridReproducesGrades: a lab with its grid writes policies-grid.csv,
// from which every graded row's holds_in and worst_regret_pct in
// policies.csv are recomputed; every recommended row has both, and every
// none row is eligible. The grid varies what no flag fixed: here the
// refusal cost, the arrivals and the model (the budget is the SLO's).
func TestGridReproducesGrades(t *testing.T) {
	t.Parallel()
	// slots runs coordinated (the fleet's by definition): its row is
	// graded against the independent rows' best, and the grid file must
	// reproduce it too (round 10's audit: --grid full graded it, and
	// policies-grid.csv had no line of it).
	l := smallLab(t, sim.ProfilePTU, "none", "honor", "slots")
	l.Loads, l.Repeat, l.Duration, l.Warmup, l.Tail = l.Loads[1:], 3, 4*time.Second, 4*time.Second, 4*time.Second
	l.MaxAttempts = sdkMaxAttempts // one cap: no twin runs
	l.Grid, l.Fixed = GridFull, Unknowns{Budget: true}
	sw, err := runLab(context.Background(), l)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{givenCondition, "refusal cost 1%", "refusal cost 5%", "arrivals gamma:2", "arrivals waves", "model documents"}
	if len(sw.Conditions) != len(want) {
		t.Fatalf("conditions %q (skipped %q), want %q", sw.Conditions, sw.GridSkipped, want)
	}
	dir := t.TempDir()
	if _, err := publish(dir, sw, Setup{}); err != nil {
		t.Fatal(err)
	}
	grid := readCSV(t, filepath.Join(dir, gridFile))
	graded, coordinated := 0, 0
	for _, r := range readCSV(t, filepath.Join(dir, csvFile)) {
		if r["policy"] == "none" && r["eligible"] != "true" {
			t.Errorf("none at %s: eligible %s", r["load"], r["eligible"])
		}
		if r["recommended"] == "true" && (r["holds_in"] == "" || r["worst_regret_pct"] == "") {
			t.Errorf("recommended %s at %s cap %s without holds_in or worst_regret_pct", r["policy"], r["load"], r["max_attempts"])
		}
		if r["holds_in"] == "" {
			continue
		}
		graded++
		if r["coordinated"] == "true" {
			coordinated++
		}
		sdk := r["sdk_cap"]
		n, holds, regret := 0, 0, 0.0
		for _, g := range grid {
			if g["policy"] != r["policy"] || g["load"] != r["load"] || g["clients"] != r["clients"] || g["sdk_cap"] != sdk {
				continue
			}
			n++
			if g["best_equivalent"] == "true" {
				holds++
			}
			best, _ := strconv.ParseFloat(g["best_pct"], 64)
			pct, _ := strconv.ParseFloat(g["success_in_slo_pct"], 64)
			regret = math.Max(regret, best-pct)
		}
		gotHolds, _ := strconv.ParseFloat(r["holds_in"], 64)
		gotRegret, _ := strconv.ParseFloat(r["worst_regret_pct"], 64)
		if n != len(want) || math.Abs(gotHolds-float64(holds)/float64(n)) > 0.0011 || math.Abs(gotRegret-regret) > 0.011 {
			t.Errorf("%s at %s (SDKs' cap %s): holds_in %v, worst_regret_pct %v; the grid's %d conditions give %v and %v",
				r["policy"], r["load"], sdk, gotHolds, gotRegret, n, float64(holds)/float64(max(n, 1)), regret)
		}
	}
	if graded < 3 || coordinated == 0 {
		t.Errorf("%d graded rows (%d coordinated), want none, honor and slots (coordinated)", graded, coordinated)
	}
}
