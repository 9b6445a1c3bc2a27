package policylab

import (
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"

	"github.com/ptuprobe/ptuprobe/internal/num"
	"github.com/ptuprobe/ptuprobe/report"
)

// csvFile is the lab's table, one line per Row.
const csvFile = "policies.csv"

// csvColumn is one column of policies.csv: its name and its cell. The
// one table drives the header and every line.
type csvColumn struct {
	name string
	cell func(r *Row) string
}

// csvColumns are policies.csv's columns, in order: the ones issue 19
// names, then the load as given, the rate, the client a policy models and
// the goodput's spread (what a tie is decided on). Fixed decimals per
// column, through num, so identical sweeps write identical bytes; an
// unknown value (-1) is an empty cell.
var csvColumns = []csvColumn{
	{"policy", func(r *Row) string { return csvText(r.Policy) }},
	{"load_x", func(r *Row) string { return known(r.LoadX, 3) }},
	{"clients", func(r *Row) string { return strconv.Itoa(r.Clients) }},
	{"max_attempts", func(r *Row) string { return strconv.Itoa(r.MaxAttempts) }},
	{"budget_ms", func(r *Row) string {
		if r.Budget <= 0 {
			return "" // no budget
		}
		return num.Decimal(float64(r.Budget.Microseconds())/1000, 3)
	}},
	{"repeats", func(r *Row) string { return strconv.Itoa(r.Repeats) }},
	{"requests", func(r *Row) string { return strconv.Itoa(r.Requests) }},
	{"succeeded", func(r *Row) string { return strconv.Itoa(r.Succeeded) }},
	{"success_pct", func(r *Row) string { return known(r.SuccessPct, 2) }},
	{"success_pct_min", func(r *Row) string { return known(r.SuccessPctMin, 2) }},
	{"success_pct_max", func(r *Row) string { return known(r.SuccessPctMax, 2) }},
	{"gave_up", func(r *Row) string { return strconv.Itoa(r.GaveUp) }},
	{"redirected", func(r *Row) string { return strconv.Itoa(r.Redirected) }},
	{"attempts", func(r *Row) string { return strconv.Itoa(r.Attempts) }},
	{"attempts_per_success", func(r *Row) string { return known(r.AttemptsPerSuccess, 3) }},
	{"http_429", func(r *Row) string { return strconv.Itoa(r.HTTP429) }},
	{"http_429_per_success", func(r *Row) string { return known(r.HTTP429PerSuccess, 3) }},
	{"goodput_per_s", func(r *Row) string { return known(r.GoodputPerS, 3) }},
	{"capacity_share_pct", func(r *Row) string { return known(r.CapacitySharePct, 2) }},
	{"e2e_p50_ms", func(r *Row) string { return known(r.E2EP50MS, 2) }},
	{"e2e_p99_ms", func(r *Row) string { return known(r.E2EP99MS, 2) }},
	{"e2e_max_ms", func(r *Row) string { return known(r.E2EMaxMS, 2) }},
	{"over_budget", func(r *Row) string { return strconv.Itoa(r.OverBudget) }},
	{"early_retries", func(r *Row) string { return strconv.Itoa(r.EarlyRetries) }},
	{"load", func(r *Row) string { return csvText(r.Load) }},
	{"rate_per_s", func(r *Row) string { return known(r.RatePerS, 3) }},
	{"models", func(r *Row) string { return csvText(r.Models) }},
	{"goodput_per_s_min", func(r *Row) string { return known(r.GoodputMin, 3) }},
	{"goodput_per_s_max", func(r *Row) string { return known(r.GoodputMax, 3) }},
	{"offered", func(r *Row) string { return strconv.Itoa(r.Offered) }},
	{"success_in_slo_pct", func(r *Row) string { return known(r.SuccessInSLOPct, 2) }},
	{"ci_low", func(r *Row) string { return known(r.CILow, 2) }},
	{"ci_high", func(r *Row) string { return known(r.CIHigh, 2) }},
	{"attempts_per_request", func(r *Row) string { return known(r.AttemptsPerRequest, 3) }},
	{"http_429_per_request", func(r *Row) string { return known(r.HTTP429PerRequest, 3) }},
	{"gave_up_local", func(r *Row) string { return strconv.Itoa(r.GaveUpLocal) }},
	{"success_p50_ms", func(r *Row) string { return known(r.SuccessP50MS, 2) }},
	{"success_p99_ms", func(r *Row) string { return known(r.SuccessP99MS, 2) }},
	{"drift_pts", func(r *Row) string { return num.Decimal(r.DriftPts, 2) }},
	{"steady", func(r *Row) string { return strconv.FormatBool(r.Steady) }},
	{"coordinated", func(r *Row) string { return strconv.FormatBool(r.Coordinated) }},
	{"recommended", nil}, // the verdict's: writeCSV fills it
	{"eligible", nil},
	{"holds_in", nil},
	{"worst_regret_pct", nil},
	{"sdk_cap", nil},
}

// verdictCell is a cell of the columns writeCSV fills from the verdict
// of the line's cap (csvColumns' nil cells): recommended, eligible,
// holds_in, worst_regret_pct, and sdk_cap, the cap itself.
func verdictCell(name string, l csvLine) string {
	picked, g := l.picked, l.grade
	switch name {
	case "sdk_cap":
		return strconv.FormatBool(l.sdkCap)
	case "recommended":
		return strconv.FormatBool(picked)
	case "eligible":
		return strconv.FormatBool(g.Eligible)
	case "holds_in":
		return known(g.HoldsIn, 3)
	}
	return known(g.WorstRegret, 2)
}

// coordinatedColumns close the lines of a coordinated lab's
// policies.csv (Sweep.Coordinated), after csvColumns: the lowest and
// highest client's success
// and the widest gap between them within one repeat,
// the calls to the Coordinator and those that fell back to a client's
// own state.
// Other labs' files do not have them.
var coordinatedColumns = []csvColumn{
	{"client_success_pct_min", func(r *Row) string { return known(r.ClientSuccessPctMin, 2) }},
	{"client_success_pct_max", func(r *Row) string { return known(r.ClientSuccessPctMax, 2) }},
	{"client_spread_pts", func(r *Row) string { return known(r.ClientSpreadPts, 2) }},
	{"coordinator_calls", func(r *Row) string { return strconv.FormatInt(r.CoordinatorCalls, 10) }},
	{"fallbacks", func(r *Row) string { return strconv.FormatInt(r.Fallbacks, 10) }},
}

// columnsOf are the columns of s's policies.csv. A partial sweep's
// lines end with a column partial, "interrupted after N of M runs" on
// every line (and the header alone says it when no row finished); a
// complete sweep's file does not have it.
func columnsOf(s Sweep) []csvColumn {
	columns := csvColumns
	if s.Coordinated {
		columns = append(slices.Clip(columns), coordinatedColumns...)
	}
	if s.Partial() {
		status := csvText(strings.TrimPrefix(s.PartialStatus(), "partial: "))
		columns = append(slices.Clip(columns), csvColumn{"partial", func(*Row) string { return status }})
	}
	return columns
}

// writeCSV writes policies.csv: the header, then one line per row of the
// sweep and cap, in the sweep's order (csvLines).
func writeCSV(w io.Writer, s Sweep) error {
	columns := columnsOf(s)
	lines := csvLines(s)
	var b strings.Builder
	for j, c := range columns {
		if j > 0 {
			b.WriteByte(',')
		}
		b.WriteString(c.name)
	}
	b.WriteByte('\n')
	for _, l := range lines {
		for j, c := range columns {
			if j > 0 {
				b.WriteByte(',')
			}
			if c.cell == nil {
				b.WriteString(verdictCell(c.name, l))
				continue
			}
			b.WriteString(c.cell(&s.Rows[l.row]))
		}
		b.WriteByte('\n')
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// known formats v with places decimals; -1, an unknown value, is empty.
func known(v float64, places int) string {
	if v < 0 {
		return ""
	}
	return num.Decimal(v, places)
}

// csvText writes a text as a CSV cell. Policy names are checked (lower
// case, no comma) but a load or a model's description is not, so every
// text is neutralised as analyze and report do (report.CSVCell).
func csvText(s string) string { return report.CSVCell(s) }

// csvLine is one line of policies.csv: a row of the sweep under one cap,
// with the verdict of that cap's group on it.
type csvLine struct {
	row    int
	sdkCap bool
	picked bool
	grade  grade
}

// csvLines are policies.csv's lines, one per policy, load, fleet size and
// cap, in the sweep's order: each row under its own cap, and a row with
// caps of its own (a policy that never retries, a modelled client) —
// one measurement, in both caps' groups — again under the SDKs' cap
// right after it, when the sweep has that cap's group at its load and
// fleet size. Each line carries its group's verdict: whether the group
// recommends the row, and the row's grade there.
func csvLines(s Sweep) []csvLine {
	groups := judge(s)
	type cell struct {
		load    string
		clients int
	}
	type key struct {
		cell
		policy              string
		sdkCap, coordinated bool
	}
	keyOf := func(r *Row, sdkCap bool) key { return key{cell{r.Load, r.Clients}, r.Policy, sdkCap, r.Coordinated} }
	var lines []csvLine
	at := map[key]int{}
	sdkGroup := map[cell]bool{}
	for _, g := range groups {
		if g.SDKCap {
			sdkGroup[cell{g.Load, g.Clients}] = true
		}
	}
	for i := range s.Rows {
		r := &s.Rows[i]
		caps := []bool{r.SDKCap}
		if r.OwnCaps && !r.SDKCap && sdkGroup[cell{r.Load, r.Clients}] {
			caps = append(caps, true)
		}
		for _, c := range caps {
			at[keyOf(r, c)] = len(lines)
			lines = append(lines, csvLine{row: i, sdkCap: c, grade: grade{Eligible: eligible(r), HoldsIn: -1, WorstRegret: -1}})
		}
	}
	mark := func(r *Row, g *verdictGroup, p *placed, picked bool) {
		if !r.OwnCaps && r.SDKCap != g.SDKCap {
			return
		}
		if i, ok := at[keyOf(r, g.SDKCap)]; ok {
			if p != nil {
				lines[i].grade = p.grade
			}
			lines[i].picked = lines[i].picked || picked
		}
	}
	for gi := range groups {
		g := &groups[gi]
		for i := range g.Ranked {
			mark(&g.Ranked[i].Row, g, &g.Ranked[i], false)
		}
		for _, i := range g.Recommended {
			mark(&g.Ranked[i].Row, g, nil, true)
		}
		for i := range g.Coordinated {
			mark(&g.Coordinated[i].Row, g, &g.Coordinated[i], false)
		}
		for _, i := range g.CoordinatedPick {
			mark(&g.Coordinated[i].Row, g, nil, true)
		}
	}
	return lines
}

// gridFile is the grid's table: one line per condition, policy, load,
// fleet size and cap.
const gridFile = "policies-grid.csv"

// gridHeader are policies-grid.csv's columns.
const gridHeader = "condition,policy,load,load_x,clients,max_attempts,sdk_cap,repeats,success_in_slo_pct,ci_low,ci_high,attempts_per_request,eligible,best_policy,best_pct,best_equivalent\n"

// writeGridCSV writes policies-grid.csv: for each group of the verdict
// (load, fleet size, cap), each condition of the grid (the given one
// first) and each eligible row measured there, the measure, its
// interval, the load, the condition's best and whether the row is among
// its best equivalents (TOST). holds_in and worst_regret_pct of
// policies.csv follow from it: the share of a row's conditions with
// best_equivalent true, its largest best_pct − success_in_slo_pct. A
// coordinated row (ranked apart) has its lines too, after the
// independent rows, against their best.
func writeGridCSV(w io.Writer, s Sweep) error {
	var b strings.Builder
	b.WriteString(gridHeader)
	for _, g := range judge(s) {
		for _, v := range g.views(&s) {
			best, bestPct := "", ""
			if v.lead != nil {
				best, bestPct = csvText(v.lead.Policy), known(v.lead.SuccessInSLOPct, 2)
			}
			line := func(r *Row, eq bool) {
				fmt.Fprintf(&b, "%s,%s,%s,%s,%d,%d,%t,%d,%s,%s,%s,%s,%t,%s,%s,%t\n",
					csvText(v.name), csvText(r.Policy), csvText(r.Load), known(r.LoadX, 3), r.Clients, g.MaxAttempts, g.SDKCap, r.Repeats,
					known(r.SuccessInSLOPct, 2), known(r.CILow, 2), known(r.CIHigh, 2), known(r.AttemptsPerRequest, 3),
					eligible(r), best, bestPct, eq)
			}
			for _, r := range v.rows {
				line(r, slices.Contains(v.eq, r))
			}
			// The coordinated rows, graded against the independent rows'
			// best (gradeOne), never the best themselves.
			for _, r := range v.coordinated {
				if candidate(r) {
					line(r, v.lead != nil && equivalent(v.lead, r))
				}
			}
		}
	}
	_, err := io.WriteString(w, b.String())
	return err
}
