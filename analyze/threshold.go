package analyze

import (
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/ptuprobe/ptuprobe/results"
)

// Threshold is one --fail-if comparison over an Analysis, such as
// "overall.p99_ms>20000" or "errors>0".
type Threshold struct {
	Expr     string  // as given, trimmed
	Selector string  // "overall", "burst", "scheduled", a raw group name, or "" for a top-level metric
	Metric   string  // "p99_ms", "count", "errors", …
	Op       string  // one of > >= < <= == !=
	Value    float64 // the bound
}

// Selectors with a meaning of their own; any other selector is a raw group
// name (as in the data, before --label).
const (
	SelectOverall   = "overall"
	SelectBurst     = "burst"
	SelectScheduled = "scheduled"
)

// TopLevelMetrics are the metrics written without a group selector.
var TopLevelMetrics = []string{"errors", "attempts", "total_429", "late"}

// groupCounters are the per-group metrics that are counts; Statistics
// names (p50_ms, …) are the others, with share_429.
var groupCounters = []string{"count", "attempts", "invalid", "late", "share_429"}

// groupMetrics lists every per-group metric name.
func groupMetrics() []string {
	out := append([]string(nil), groupCounters...)
	for _, s := range Statistics {
		out = append(out, s.Name)
	}
	return out
}

// operators, longest first so ">=" is not read as ">".
var operators = []string{">=", "<=", "==", "!=", ">", "<"}

// maxExprLen bounds a threshold expression.
const maxExprLen = 200

// ParseThreshold parses "[selector.]metric OP number". The metric is
// checked against the known names; the selector is not, since a raw group
// name is only known once the data is read.
func ParseThreshold(expr string) (Threshold, error) {
	e := strings.TrimSpace(expr)
	fail := func(format string, a ...any) (Threshold, error) {
		return Threshold{}, fmt.Errorf("%q: %s", clip(e, 64), fmt.Sprintf(format, a...))
	}
	if e == "" {
		return fail("empty expression; want [group.]metric OP number, e.g. overall.p99_ms>20000")
	}
	if len(e) > maxExprLen {
		return fail("longer than %d characters", maxExprLen)
	}
	opAt, op := -1, ""
	for i := 0; i < len(e) && opAt < 0; i++ {
		for _, o := range operators {
			if strings.HasPrefix(e[i:], o) {
				opAt, op = i, o
				break
			}
		}
	}
	if opAt < 0 {
		if strings.Contains(e, "=") {
			return fail("no comparison operator (use == for equality); want one of > >= < <= == !=")
		}
		return fail("no comparison operator; want one of > >= < <= == !=")
	}
	lhs := strings.TrimSpace(e[:opAt])
	rhs := strings.TrimSpace(e[opAt+len(op):])
	if lhs == "" {
		return fail("nothing before %s; want [group.]metric", op)
	}
	v, err := strconv.ParseFloat(rhs, 64)
	if err != nil || math.IsNaN(v) || math.IsInf(v, 0) {
		return fail("%q after %s is not a number", clip(rhs, 32), op)
	}
	t := Threshold{Expr: e, Op: op, Value: v}
	if dot := strings.LastIndexByte(lhs, '.'); dot >= 0 {
		t.Selector, t.Metric = strings.TrimSpace(lhs[:dot]), strings.TrimSpace(lhs[dot+1:])
		if t.Selector == "" {
			return fail("empty group before %q", "."+t.Metric)
		}
		if !contains(groupMetrics(), t.Metric) {
			return fail("unknown group metric %q (known: %s)", clip(t.Metric, 32), strings.Join(groupMetrics(), ", "))
		}
		if strings.ContainsAny(t.Selector, "<>=!") {
			return fail("more than one comparison operator")
		}
		return t, nil
	}
	t.Metric = lhs
	if !contains(TopLevelMetrics, t.Metric) {
		return fail("unknown metric %q: top-level metrics are %s; group metrics need a group, e.g. overall.%s", clip(t.Metric, 32), strings.Join(TopLevelMetrics, ", "), "p99_ms")
	}
	return t, nil
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// Verdict is a Threshold evaluated over an Analysis.
type Verdict struct {
	Threshold
	// Measured is the value compared, when Measurable.
	Measured   float64
	Measurable bool
	// Breached is true when the comparison holds: the run fails.
	Breached bool
	// Note says why a threshold could not be measured, or which group a
	// shape selector resolved to.
	Note string
}

// Evaluate measures t over a. A metric that cannot be measured (a
// percentile of a group below --min-group, share_429 without ptuprobe
// attempts) does not breach: a tail that was not observed cannot exceed a
// bound; pair it with "GROUP.count<N" to require data. A group that is not
// in the analysis counts as empty.
func (t Threshold) Evaluate(a *Analysis) Verdict {
	v := Verdict{Threshold: t}
	if t.Selector == "" {
		switch t.Metric {
		case "errors":
			v.Measured = float64(a.Totals.Errors)
		case "attempts":
			v.Measured = float64(a.Totals.Attempts)
		case "total_429":
			v.Measured = float64(a.Totals.Total429)
		case "late":
			v.Measured = float64(a.Totals.Late)
		}
		v.Measurable = true
		v.Breached = compare(v.Measured, t.Op, t.Value)
		return v
	}
	g, note := a.selectGroup(t.Selector)
	v.Note = note
	if g == nil {
		g = &Group{}
	}
	switch t.Metric {
	case "count":
		v.Measured, v.Measurable = float64(g.Count()), true
	case "attempts":
		v.Measured, v.Measurable = float64(g.Attempts), true
	case "invalid":
		v.Measured, v.Measurable = float64(g.NoWait.Invalid), true
	case "late":
		v.Measured, v.Measurable = float64(g.Late), true
	case "share_429":
		v.Measured, v.Measurable = g.Share429()
		if !v.Measurable {
			v.Note = joinNote(v.Note, "no ptuprobe attempts in this group")
		}
	default:
		v.Measured, v.Measurable = g.Stats[t.Metric]
		if !v.Measurable {
			v.Note = joinNote(v.Note, fmt.Sprintf("%d usable waits, below the minimum group size %d", g.Count(), a.MinGroup))
		}
	}
	if v.Measurable {
		v.Breached = compare(v.Measured, t.Op, t.Value)
	}
	return v
}

func joinNote(a, b string) string {
	if a == "" {
		return b
	}
	return a + "; " + b
}

// selectGroup resolves a selector. "burst" and "scheduled" mean the group
// whose raw name is the shape's default (burst-shaped), else the group
// published under that default's label, else the only group of that shape; a raw name matches the group it was merged into; a
// published label matches too.
func (a *Analysis) selectGroup(sel string) (*Group, string) {
	if sel == SelectOverall {
		return &a.Overall, ""
	}
	if sel == SelectBurst || sel == SelectScheduled {
		def, shape := results.GroupBurst, results.ShapeBurst
		if sel == SelectScheduled {
			def, shape = results.GroupScheduled, results.ShapeScheduled
		}
		if g := a.groupByRaw(def); g != nil {
			return g, ""
		}
		// A foreign CSV renamed to the default label (--label x="Burst-shaped source").
		if g := a.GroupByLabel(DefaultLabels[def]); g != nil {
			return g, ""
		}
		var found []*Group
		for i := range a.Groups {
			if a.Groups[i].Shape == shape {
				found = append(found, &a.Groups[i])
			}
		}
		switch len(found) {
		case 1:
			return found[0], fmt.Sprintf("%s is group %q", sel, found[0].Label)
		case 0:
			return nil, fmt.Sprintf("no %s-shaped group in the input", sel)
		default:
			return nil, fmt.Sprintf("%d groups have the %s shape; name one by its group", len(found), sel)
		}
	}
	if g := a.groupByRaw(sel); g != nil {
		return g, ""
	}
	if g := a.GroupByLabel(sel); g != nil {
		return g, ""
	}
	return nil, fmt.Sprintf("no group %q in the input", clip(sel, results.MaxGroupLen))
}

func (a *Analysis) groupByRaw(raw string) *Group {
	for i := range a.Groups {
		if contains(a.Groups[i].Raw, raw) {
			return &a.Groups[i]
		}
	}
	return nil
}

func compare(x float64, op string, y float64) bool {
	switch op {
	case ">":
		return x > y
	case ">=":
		return x >= y
	case "<":
		return x < y
	case "<=":
		return x <= y
	case "==":
		return x == y
	case "!=":
		return x != y
	}
	return false
}
