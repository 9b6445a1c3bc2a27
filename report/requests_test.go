package report

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/ptuprobe/ptuprobe/analyze"
	"github.com/ptuprobe/ptuprobe/results"
)

// TestRequestsNotSentPublished: analysis.json's requests and the requests
// table count the planned requests beside the attempts sent, those never
// sent, and success per planned request; the older fields keep their
// meaning (attempts sent, success of them).
func TestRequestsNotSentPublished(t *testing.T) {
	t.Parallel()
	recs := []results.Record{row(200, -1, 0), row(429, 40, 0), row(0, -1, 0), row(0, -1, 0)}
	recs[2].Decision, recs[2].Error, recs[2].SentMS, recs[2].LatencyMS = results.DecisionGiveUpLocal, results.ClassCooldown, results.None, results.None
	recs[3].Decision, recs[3].Error, recs[3].SentMS, recs[3].LatencyMS = results.DecisionInterrupted, results.ClassCanceled, results.None, results.None
	tally := analyze.NewTally(false)
	for i := range recs {
		tally.Observe(&recs[i])
	}
	a, err := tally.Analysis(nil, 1)
	if err != nil {
		t.Fatal(err)
	}
	b, err := json.Marshal(requestsJSON(a).Over)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{`"requests":2`, `"succeeded":1`, `"success_pct":50`, `"planned":4`, `"not_sent":2`,
		`"given_up_unsent":1`, `"interrupted_unsent":1`, `"planned_success_pct":25`, `"transport_errors":0`} {
		if !strings.Contains(string(b), want) {
			t.Errorf("analysis.json requests lack %s: %s", want, b)
		}
	}
	md := requestsTable(a).markdown()
	if !strings.Contains(md, "| group | planned | requests | ok | success |") ||
		!strings.Contains(md, "| Overall | 4 | 2 | 1 | 25% | 1 | 0 | 0 | 0 | 2 |") {
		t.Errorf("requests table:\n%s", md)
	}
}
