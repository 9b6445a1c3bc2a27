package report

import (
	"bytes"
	"math"
	"testing"

	"github.com/ptuprobe/ptuprobe/analyze"
	"github.com/ptuprobe/ptuprobe/results"
)

// resultsAnalysis analyzes a small deterministic ptuprobe results file
// with every kind of row: both shapes, 429s without a usable wait, errors,
// late sends, a group below --min-group and several dialects.
func resultsAnalysis(t *testing.T) *analyze.Analysis {
	t.Helper()
	var buf bytes.Buffer
	w, err := results.NewWriter(&buf)
	if err != nil {
		t.Fatal(err)
	}
	add := func(shape, group string, seq, status int, wait float64, source, errClass string) {
		r := results.Blank()
		r.RunID, r.Shape, r.Group, r.Seq, r.Attempt = "abcd0123", shape, group, seq, 1
		r.IntendedMS, r.SentMS = float64(seq*50), float64(seq*50+seq%3*6)
		r.LatencyMS, r.Status, r.Error = 10, status, errClass
		r.WaitMS, r.WaitSource = wait, source
		// A token budget on every request, prompt sizes where a response
		// reported usage, and the utilization a PTU reports with a 429.
		r.MaxTokens = 100
		if status == 200 {
			// A streamed answer: its first content token, then 20 tokens.
			r.PromptTokens, r.CompletionTokens = 1000+seq, 20
			r.LatencyMS, r.TTFTMS = float64(200+2*seq), float64(40+seq)
			r.TPOTMS = (r.LatencyMS - r.TTFTMS) / 19
			r.ITLP50MS, r.ITLMaxMS = math.Round(r.TPOTMS), 3*math.Round(r.TPOTMS)
		}
		if status == 429 && wait >= 0 {
			r.UtilizationPct = 100 + wait/1000
		}
		// Every kind of dialect cell: one per source, none for no response.
		switch {
		case status == 0:
		case source == results.WaitRetryAfterMS || status == 200:
			r.Dialect = results.DialectAzure
		case source == results.WaitNone:
			r.Dialect = results.DialectOpenAI
		default:
			r.Dialect = results.DialectRFC9110
		}
		if err := w.Write(&r); err != nil {
			t.Fatal(err)
		}
	}
	for i := 0; i < 40; i++ {
		switch {
		case i%4 == 0:
			add("burst", "burst-shaped", i, 429, float64(30+i), results.WaitRetryAfterMS, "")
		case i%4 == 1 && i < 20:
			add("burst", "burst-shaped", i, 429, float64(1000*i), results.WaitRetryAfterSeconds, "")
		case i == 21:
			add("burst", "burst-shaped", i, 429, results.None, results.WaitInvalid, "")
		case i%10 == 3:
			add("scheduled", "scheduled-shaped", i, 429, float64(i), results.WaitRetryAfterMS, "")
		case i%10 == 7:
			add("scheduled", "scheduled-shaped", i, 0, results.None, results.WaitNone, results.ClassTimeout)
		case i%10 == 9:
			add("scheduled", "scheduled-shaped", i, 429, results.None, results.WaitNone, "")
		default:
			add("scheduled", "nightly", i, 200, results.None, results.WaitNone, "")
		}
	}
	slo, err := analyze.ParseSLO("ttft=60ms,e2e=1s")
	if err != nil {
		t.Fatal(err)
	}
	return readAnalysis(t, &buf, analyze.ForeignColumns{}, analyze.Labels{"nightly": "Nightly schedule"}, analyze.WithSLO(slo))
}
