package analyze

import (
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/montanaflynn/stats"
)

// Statistic is one published summary of a group's advised waits: a
// percentile column of retry_after_ms_percentiles.csv and a --fail-if metric.
type Statistic struct {
	Key     string  // what --columns accepts: "p50", "min", "mean"
	Name    string  // the column and metric name: "p50_ms"
	Title   string  // the Markdown column heading: "p50"
	Percent float64 // for a percentile; 0 for min, max and mean
}

// Statistics lists every statistic in the order extra columns are written.
var Statistics = []Statistic{
	{Key: "p50", Name: "p50_ms", Title: "p50", Percent: 50},
	{Key: "p90", Name: "p90_ms", Title: "p90", Percent: 90},
	{Key: "p99", Name: "p99_ms", Title: "p99", Percent: 99},
	{Key: "max", Name: "max_ms", Title: "max"},
	{Key: "min", Name: "min_ms", Title: "min"},
	{Key: "p10", Name: "p10_ms", Title: "p10", Percent: 10},
	{Key: "p25", Name: "p25_ms", Title: "p25", Percent: 25},
	{Key: "p75", Name: "p75_ms", Title: "p75", Percent: 75},
	{Key: "p95", Name: "p95_ms", Title: "p95", Percent: 95},
	{Key: "p999", Name: "p999_ms", Title: "p99.9", Percent: 99.9},
	{Key: "mean", Name: "mean_ms", Title: "mean"},
}

// DefaultStatistics is how many leading entries of Statistics are always
// written: p50, p90, p99, max.
const DefaultStatistics = 4

// ParseColumns returns the default statistics followed by the extra ones
// named in keys (as in --columns min,p95), in the order of Statistics, so
// the default columns never move. Names may carry the _ms suffix.
func ParseColumns(keys []string) ([]Statistic, error) {
	want := map[string]bool{}
	for _, k := range keys {
		k = strings.TrimSuffix(strings.ToLower(strings.TrimSpace(k)), "_ms")
		if k == "" || k == "count" {
			continue
		}
		if _, ok := statisticByKey(k); !ok {
			return nil, fmt.Errorf("unknown column %q (choose from %s)", clip(k, 16), strings.Join(statisticKeys(), ", "))
		}
		want[k] = true
	}
	out := append([]Statistic(nil), Statistics[:DefaultStatistics]...)
	for _, s := range Statistics[DefaultStatistics:] {
		if want[s.Key] {
			out = append(out, s)
		}
	}
	return out, nil
}

func statisticByKey(k string) (Statistic, bool) {
	for _, s := range Statistics {
		if s.Key == k {
			return s, true
		}
	}
	return Statistic{}, false
}

func statisticKeys() []string {
	keys := make([]string, len(Statistics))
	for i, s := range Statistics {
		keys[i] = s.Key
	}
	return keys
}

// compute evaluates s over sorted, non-empty waits.
func (s Statistic) compute(sorted sortedWaits) float64 {
	switch s.Key {
	case "min":
		return sorted.at(0)
	case "max":
		return sorted.at(sorted.len() - 1)
	case "mean":
		return sorted.mean()
	}
	return percentileOf(sorted, s.Percent)
}

// Percentile returns the percent-th percentile of sorted waits by linear
// interpolation between closest ranks at (percent/100)(n−1): Hyndman–Fan
// type 7, numpy's default, as stats.Percentile computes it and as the
// published reference table was computed. It is NaN for no waits or a
// percent outside (0, 100]. Waits that are not sorted are sorted first,
// in a copy.
func Percentile(sorted []float64, percent float64) float64 {
	// cmp.Less sorts a NaN first: sorted[0] tells whether there is one.
	if len(sorted) > 0 && !math.IsNaN(sorted[0]) && slices.IsSorted(sorted) {
		return percentileSorted(sorted, percent)
	}
	v, err := stats.Percentile(sorted, percent)
	if err != nil {
		return math.NaN()
	}
	return v
}
