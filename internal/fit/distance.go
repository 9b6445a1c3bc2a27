package fit

import (
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/ptuprobe/ptuprobe/analyze"
	"github.com/ptuprobe/ptuprobe/internal/num"
	"github.com/ptuprobe/ptuprobe/sim"
)

// Defaults of the judgement (docs/fit.md says why).
const (
	// DefaultThreshold is the largest KS distance a fitted group's waits
	// may have from the recorded ones in a good fit: about the 10%
	// critical value of two samples of the main job's burst group, ~130
	// waits each (1.22 × √(2/130) = 0.15), so a twin that draws from the
	// recorded distribution passes nine times in ten, and one that misses
	// a mode holding a sixth of the waits fails.
	DefaultThreshold = 0.15
	// DefaultMinAgreement is the least share of the fitted groups'
	// recorded sends the twin must refuse or admit alike in a good fit
	// (a replay): a limiter that gives the right waits to the wrong
	// sends is not the deployment's.
	DefaultMinAgreement = 0.9
	// countWeight weighs the soft term of the objective: how far the
	// twin's 429 count is from the recorded one, a share of the larger.
	countWeight = 0.25
	// spreadWeight weighs the objective's smooth term: how far apart the
	// waits' quantiles lie, in decades (logDistance). KS cannot tell a
	// mode of long waits just missed from one missed by a mile — both
	// count the whole mode — so without it the search has no slope to
	// follow towards the right wait.
	spreadWeight = 0.5
	// judgedWeight weighs the objective's term for the percentiles the
	// judgement checks (p50, p90, p99: judgedMiss). The spread term
	// averages twenty quantiles, so a tail missed by half — the p99 of a
	// tail that holds a few percent of the waits — moves it by little,
	// and a search led by it settles for a twin the judgement calls poor.
	judgedWeight = 1.0
)

// Resolution of the waits compared: two waits closer than the larger of
// resolutionMS and resolutionShare of the shorter are the same wait.
// Runs of one simulator that differ only in its seed (the completion
// lengths) put the main job's burst waves at waits 30 ms or 5% apart, and
// a wave's refusals share one wait: the plain KS of two such runs is 0.3
// (TestSeedsDifferByAResolution). A client cannot act on the difference
// either: its jitter stretches a wait by up to 20%, and the witness counts
// comebacks within 50 ms of each other as one herd.
const (
	resolutionMS    = 50
	resolutionShare = 0.10
)

// tolerance is how far a wait of x ms may move and stay the same wait.
func tolerance(x float64) float64 { return max(resolutionMS, resolutionShare*x) }

// ks is the two-sample Kolmogorov–Smirnov distance of sorted a and b at
// the resolution: the largest amount by which one's distribution function
// exceeds the other's even when the other is allowed the tolerance,
// max over x of F_a(x) − F_b(x + tol(x)) and F_b(x) − F_a(x + tol(x)).
// At tolerance 0 it is the plain KS (exactKS). Two empty samples are 0
// apart, an empty one and another 1.
func ks(a, b []float64) float64 { return ksWithin(a, b, tolerance) }

// exactKS is the plain two-sample KS distance.
func exactKS(a, b []float64) float64 { return ksWithin(a, b, func(float64) float64 { return 0 }) }

func ksWithin(a, b []float64, tol func(float64) float64) float64 {
	switch {
	case len(a) == 0 && len(b) == 0:
		return 0
	case len(a) == 0 || len(b) == 0:
		return 1
	}
	cdf := func(s []float64, x float64) float64 {
		n, _ := slices.BinarySearchFunc(s, x, func(v, x float64) int {
			if v <= x {
				return -1
			}
			return 1
		})
		return float64(n) / float64(len(s))
	}
	d := 0.0
	for _, x := range a {
		d = max(d, cdf(a, x)-cdf(b, x+tol(x)), cdf(b, x)-cdf(a, x+tol(x)))
	}
	for _, x := range b {
		d = max(d, cdf(a, x)-cdf(b, x+tol(x)), cdf(b, x)-cdf(a, x+tol(x)))
	}
	return d
}

// logDistance is the mean distance, in decades of 1 + wait (ms), between
// the spreadQuantiles of sorted a and b (their Wasserstein
// distance on a log scale, sampled): 0 for one distribution, and
// growing with how far a mode is missed. An empty sample is 1 decade
// from another, 0 from an empty one.
func logDistance(a, b []float64) float64 {
	switch {
	case len(a) == 0 && len(b) == 0:
		return 0
	case len(a) == 0 || len(b) == 0:
		return 1
	}
	d := 0.0
	for _, q := range spreadQuantiles {
		d += abs(math.Log10(1+analyze.Percentile(a, q)) - math.Log10(1+analyze.Percentile(b, q)))
	}
	return d / float64(len(spreadQuantiles))
}

// spreadQuantiles are the percentiles logDistance compares: every 5th,
// and the 99th, where a long tail shows.
var spreadQuantiles = []float64{5, 10, 15, 20, 25, 30, 35, 40, 45, 50, 55, 60, 65, 70, 75, 80, 85, 90, 95, 99}

// judgedMiss is how far beyond percentileTolerance the twin's p50, p90
// and p99 lie from the recorded, in decades of 1 + wait (ms), summed: 0
// for a twin whose percentiles would pass the judgement, and growing
// with how far each misses, so the search has a slope towards passing.
// An empty sample misses by 1 decade, none if both are empty.
func judgedMiss(rec, twin []float64) float64 {
	switch {
	case len(rec) == 0 && len(twin) == 0:
		return 0
	case len(rec) == 0 || len(twin) == 0:
		return 1
	}
	d := 0.0
	for _, q := range judgedPercentiles {
		r, w := analyze.Percentile(rec, q), analyze.Percentile(twin, q)
		allowed := max(percentileTolerance*r, resolutionMS)
		if off := abs(w - r); off > allowed {
			// The decades between the twin's and the nearest value the
			// judgement would pass.
			near := r + sign(w-r)*allowed
			d += abs(math.Log10(1+max(w, 0)) - math.Log10(1+max(near, 0)))
		}
	}
	return d
}

// judgedPercentiles are the percentiles the judgement checks.
var judgedPercentiles = []float64{50, 90, 99}

// percentileTolerance is how far a good twin's p50, p90 and p99 may lie
// from the recorded ones: a share of the recorded, or resolutionMS,
// whichever is more. KS alone would pass a twin that misses a tail
// holding fewer waits than the threshold (the documents' 7% of long
// waits).
const percentileTolerance = 0.25

// percentilesOff words the percentiles of the twin's waits that lie
// farther than percentileTolerance from the recorded; empty when none.
func percentilesOff(rec, twin []float64) []string {
	if len(rec) == 0 || len(twin) == 0 {
		return nil
	}
	var off []string
	for _, q := range judgedPercentiles {
		r, w := analyze.Percentile(rec, q), analyze.Percentile(twin, q)
		if abs(w-r) > max(percentileTolerance*r, resolutionMS) {
			off = append(off, fmt.Sprintf("p%v %s against %s", q, num.Millis(w, 1), num.Millis(r, 1)))
		}
	}
	return off
}

func abs(x float64) float64 {
	if x < 0 {
		return -x
	}
	return x
}

// summary is the documents' table of sorted waits: count, p50, p90,
// p99 (type-7, as analyze computes them) and max.
func summary(w []float64) sim.Waits {
	if len(w) == 0 {
		return sim.Waits{}
	}
	return sim.Waits{Count: len(w), P50: analyze.Percentile(w, 50), P90: analyze.Percentile(w, 90), P99: analyze.Percentile(w, 99), Max: w[len(w)-1]}
}

// score is one replay compared with what was recorded.
type score struct {
	objective float64
	// agreement is 1 − Σ |recorded − twin 429s| per second of each plan
	// (agreementBin) over the fitted sends; -1 without a replay.
	agreement float64
	groups    []groupScore
}

type groupScore struct {
	group    string
	heldOut  bool
	ks       float64   // at the resolution
	twin     []float64 // sorted
	recorded []float64 // sorted
	refused  int       // the twin's 429s
}

// compare scores a replay's answers against s. The objective, lower
// better, is over the fitted groups:
//
//	mean KS of the advised waits
//	+ spreadWeight × mean logDistance of the waits
//	+ countWeight × mean |n − n′| / max(n, n′)     the 429 counts
//	+ judgedWeight × mean judgedMiss               p50, p90, p99
//	+ (1 − agreement)                              replay only
func compare(s *workload, rp *replayer, got []answer, heldOut map[string]bool) score {
	byGroup := map[string]*groupScore{}
	out := score{agreement: -1}
	for _, g := range s.Groups {
		out.groups = append(out.groups, groupScore{group: g.Group, heldOut: heldOut[g.Group]})
	}
	for i := range out.groups {
		byGroup[out.groups[i].group] = &out.groups[i]
	}
	bins := make([]int, len(rp.sends)) // bin (fewer than the sends) → recorded 429s − the twin's
	fitted := 0
	for i, a := range got {
		g := byGroup[rp.sends[i].Group]
		if a.refused {
			g.refused++
			if a.wait >= 0 {
				g.twin = append(g.twin, a.wait)
			}
		}
		if !g.heldOut {
			fitted++
			bins[rp.bins[i]] += b01(rp.sends[i].Refused) - b01(a.refused)
		}
	}
	var sumKS, sumCount, sumSpread, sumJudged float64
	n := 0
	for i, g := range s.Groups {
		gs := &out.groups[i]
		slices.Sort(gs.twin)
		gs.recorded = g.Waits
		gs.ks = ks(g.Waits, gs.twin) // the plain KS, reported, is the profile's alone (result)
		if gs.heldOut {
			continue
		}
		n++
		sumKS += gs.ks
		sumSpread += logDistance(g.Waits, gs.twin)
		sumJudged += judgedMiss(g.Waits, gs.twin)
		sumCount += float64(absInt(gs.refused-g.Refused)) / float64(max(gs.refused, g.Refused, 1))
	}
	out.objective = (sumKS + countWeight*sumCount + spreadWeight*sumSpread + judgedWeight*sumJudged) / float64(max(n, 1))
	if s.Replay && fitted > 0 {
		off := 0
		for _, d := range bins {
			off += absInt(d)
		}
		out.agreement = 1 - float64(off)/float64(fitted)
		out.objective += 1 - out.agreement
	}
	return out
}

func absInt(x int) int {
	if x < 0 {
		return -x
	}
	return x
}

// ksAlpha is the significance at which the threshold is read as a KS
// critical value: the 10% of DefaultThreshold's derivation.
const ksAlpha = 0.10

// minWaitsAt is the fewest usable waits a group's recorded sample must hold
// for a KS distance within threshold to test a distribution: the n from
// which the KS critical value at ksAlpha, c(α)/√n with c(α) =
// √(−ln(α/2)/2) = 1.224, is at most the threshold. Two samples of n and m
// waits test as one of nm/(n+m), always fewer than n: with fewer recorded
// waits than this, whatever the twin draws, a distance within the
// threshold is what two different distributions give more often than not,
// and the twin's agreeing says nothing. At the default threshold, 0.15,
// it is 67 (the main job's burst group holds ~125, its scheduled ~25).
func minWaitsAt(threshold float64) int {
	c := math.Sqrt(-math.Log(ksAlpha/2) / 2)
	return int(math.Ceil(c * c / (threshold * threshold)))
}

// judge says whether a score is a good fit: every tested fitted group's
// KS at most threshold and its p50, p90 and p99 within
// percentileTolerance, and, for a replay, the agreement at least
// minAgreement. A fitted group of fewer than minWaits recorded waits is
// not tested (its KS is reported, not judged); a fit none of whose fitted
// groups is tested, and that fails no test, is insufficient: too few
// refusals to tell a twin from another. A failed test makes it poor
// whatever the counts (a twin that refuses where the run did not is
// wrong however few refusals there were).
func judge(sc score, threshold, minAgreement float64, minWaits int) (string, string) {
	var bad, untested []string
	worst, worstGroup := -1.0, ""
	tested, waits := 0, 0
	for _, g := range sc.groups {
		if g.heldOut {
			continue
		}
		waits += len(g.recorded)
		if len(g.recorded) < minWaits {
			untested = append(untested, fmt.Sprintf("%s's %d (KS %s)", g.group, len(g.recorded), num.Decimal(g.ks, 3)))
			continue
		}
		tested++
		if g.ks > worst {
			worst, worstGroup = g.ks, g.group
		}
		if g.ks > threshold {
			bad = append(bad, fmt.Sprintf("%s's waits are %s from the recorded (KS, more than %s)", g.group, num.Decimal(g.ks, 3), num.Decimal(threshold, 3)))
		}
		if off := percentilesOff(g.recorded, g.twin); len(off) > 0 {
			bad = append(bad, fmt.Sprintf("%s's %s (more than %s%% off)", g.group, strings.Join(off, ", "), num.Decimal(100*percentileTolerance, 0)))
		}
	}
	if sc.agreement >= 0 && sc.agreement < minAgreement {
		bad = append(bad, fmt.Sprintf("the twin's refusals match the recorded ones, second by second, for only %s%% of the sends (at least %s%% wanted)", num.Decimal(100*sc.agreement, 1), num.Decimal(100*minAgreement, 0)))
	}
	var notes []string
	if len(untested) > 0 && (len(bad) > 0 || tested > 0) {
		notes = append(notes, fmt.Sprintf("not tested, with fewer than %d usable waits: %s", minWaits, strings.Join(untested, ", ")))
	}
	for _, g := range sc.groups {
		if g.heldOut {
			notes = append(notes, fmt.Sprintf("held out, %s is %s from the recorded", g.group, num.Decimal(g.ks, 3)))
		}
	}
	tail := ""
	if len(notes) > 0 {
		tail = "; " + strings.Join(notes, "; ")
	}
	switch {
	case len(bad) > 0:
		return sim.FitPoor, strings.Join(bad, "; ") + tail
	case tested == 0:
		return sim.FitInsufficient, fmt.Sprintf("the fitted groups hold %d usable waits in all (%s), and a group's KS tests a distribution from %d on "+
			"(the 10%% critical value 1.224/√n is within the threshold %s from there): too few refusals to tell this twin from another",
			waits, strings.Join(untested, ", "), minWaits, num.Decimal(threshold, 3)) + tail
	}
	why := fmt.Sprintf("every tested group's waits are within KS %s of the recorded (the farthest: %s, %s), their p50, p90 and p99 within %s%%", num.Decimal(threshold, 3), worstGroup, num.Decimal(worst, 3), num.Decimal(100*percentileTolerance, 0))
	if sc.agreement >= 0 {
		why += fmt.Sprintf(", and the twin's refusals match the recorded ones, second by second, for %s%% of the sends (at least %s%%)", num.Decimal(100*sc.agreement, 1), num.Decimal(100*minAgreement, 0))
	}
	return sim.FitGood, why + tail
}
