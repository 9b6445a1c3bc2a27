package report

import (
	"encoding/json"
	"io"
	"strconv"

	"github.com/ptuprobe/ptuprobe/analyze"
	"github.com/ptuprobe/ptuprobe/internal/num"
)

// jsonGroup is one group in analysis.json. Raw group names are left out:
// a raw name renamed with --label may be the very thing being hidden.
type jsonGroup struct {
	Label               string                 `json:"label"`
	Count               int                    `json:"count"`
	Stats               map[string]json.Number `json:"stats"`
	PercentilesWithheld bool                   `json:"percentiles_withheld"`
	Attempts            int                    `json:"attempts"`
	Total429            int                    `json:"total_429"`
	Share429            *json.Number           `json:"share_429"`
	NoWait              analyze.NoWait         `json:"no_wait"`
	Late                int                    `json:"late"`
	Errors              int                    `json:"errors"`
}

type jsonTotals struct {
	Attempts     int            `json:"attempts"`
	Total429     int            `json:"total_429"`
	Errors       int            `json:"errors"`
	Late         int            `json:"late"`
	ByStatus     map[string]int `json:"by_status"`
	ByErrorClass map[string]int `json:"by_error_class"`
	NoWait       analyze.NoWait `json:"no_wait"`
	// WaitSources and Dialects count the 429s of ptuprobe results by
	// wait_source and by dialect.
	WaitSources map[string]int         `json:"wait_sources"`
	Dialects    []analyze.DialectCount `json:"dialects"`
}

type jsonAnalysis struct {
	Description    string             `json:"description"`
	Columns        []string           `json:"columns"`
	MinGroup       int                `json:"min_group"`
	Overall        jsonGroup          `json:"overall"`
	Groups         []jsonGroup        `json:"groups"`
	Requests       jsonRequests       `json:"requests"`
	SLO            string             `json:"slo,omitempty"`
	Goodput        []jsonGoodputRow   `json:"goodput,omitempty"`
	Baseline       *jsonBaseline      `json:"baseline,omitempty"`
	Totals         jsonTotals         `json:"totals"`
	Flags          []analyze.Flag     `json:"flags"`
	Thresholds     map[string]float64 `json:"flag_thresholds"`
	Reading        string             `json:"reading"`
	Inputs         map[string]int     `json:"inputs"`
	InvalidValues  analyze.LineRefs   `json:"invalid_values"`
	UnreadableRows analyze.LineRefs   `json:"unreadable_rows"`
	Warnings       []string           `json:"warnings"`
	Timeline       string             `json:"timeline,omitempty"`
	Overshoot      *jsonOvershoot     `json:"overshoot"`
}

// WriteJSON writes analysis.json: the numbers of summary.md, with numbers
// rounded as in the CSV.
func WriteJSON(w io.Writer, a *analyze.Analysis, opts Options) error {
	cols := opts.columns()
	names := []string{"count"}
	for _, s := range cols {
		names = append(names, s.Name)
	}
	j := jsonAnalysis{
		Description: "Advised waits after 429 in the analyzed runs; descriptive, not a guarantee.",
		Columns:     names,
		MinGroup:    a.MinGroup,
		Overall:     groupJSON(&a.Overall, cols),
		Groups:      []jsonGroup{},
		Requests:    requestsJSON(a),
		SLO:         a.SLO.String(),
		Goodput:     goodputJSON(a),
		Baseline:    baselineJSON(a),
		Totals: jsonTotals{
			Attempts: a.Totals.Attempts, Total429: a.Totals.Total429,
			Errors: a.Totals.Errors, Late: a.Totals.Late,
			ByStatus: map[string]int{}, ByErrorClass: a.Totals.ByErrorClass,
			NoWait:      a.Totals.NoWait,
			WaitSources: a.Totals.WaitSources,
			Dialects:    a.Totals.Dialects,
		},
		Flags:          a.Flags,
		Thresholds:     map[string]float64{analyze.FlagSparse: analyze.SparseBelow, analyze.FlagImbalanced: analyze.ImbalancedShare, "late_after_ms": analyze.LateAfterMS, "long_tail_p99_over_p50": analyze.LongTailRatio},
		Reading:        Reading(a),
		Inputs:         map[string]int{"ptuprobe_results": a.ResultsFiles, "foreign_csv": a.ForeignFiles},
		InvalidValues:  a.InvalidValues,
		UnreadableRows: a.UnreadableRows,
		Warnings:       a.Warnings,
		Overshoot:      overshootJSON(a),
	}
	for i := range a.Groups {
		j.Groups = append(j.Groups, groupJSON(&a.Groups[i], cols))
	}
	for s, n := range a.Totals.ByStatus {
		j.Totals.ByStatus[strconv.Itoa(s)] = n
	}
	if j.Flags == nil {
		j.Flags = []analyze.Flag{}
	}
	if j.Totals.WaitSources == nil {
		j.Totals.WaitSources = map[string]int{}
	}
	if j.Totals.Dialects == nil {
		j.Totals.Dialects = []analyze.DialectCount{}
	}
	if j.Warnings == nil {
		j.Warnings = []string{}
	}
	if j.InvalidValues.First == nil {
		j.InvalidValues.First = []analyze.LineRef{}
	}
	if j.UnreadableRows.First == nil {
		j.UnreadableRows.First = []analyze.LineRef{}
	}
	if opts.Timeline && a.ResultsFiles > 0 {
		j.Timeline = TimelineFile + " shows send times and is not part of the sanitized set"
	}
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(j)
}

func groupJSON(g *analyze.Group, cols []analyze.Statistic) jsonGroup {
	j := jsonGroup{
		Label: g.Label, Count: g.Count(), Stats: map[string]json.Number{},
		PercentilesWithheld: g.BelowMinGroup(),
		Attempts:            g.Attempts, Total429: g.Total429(),
		NoWait: g.NoWait, Late: g.Late, Errors: g.Errors,
	}
	for _, s := range cols {
		if v, ok := g.Stats[s.Name]; ok {
			j.Stats[s.Name] = json.Number(Number(v))
		}
	}
	if s, ok := g.Share429(); ok {
		n := json.Number(num.Decimal(s, 4))
		j.Share429 = &n
	}
	return j
}
