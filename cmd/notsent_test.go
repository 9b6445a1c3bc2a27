package cmd

import (
	"context"
	"github.com/ptuprobe/ptuprobe/analyze"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/ptuprobe/ptuprobe/internal/campaign"
	"github.com/ptuprobe/ptuprobe/results"
)

// TestSummaryCountsRequestsNotSent: a schedule whose pace sheds locally
// (the first answer advises a wait past the budget, so every later
// arrival is given up before it is sent) writes a row for every planned
// request, and its summary counts planned requests beside the attempts
// sent, the ones given up unsent, and success per planned request. The
// summary once counted only the attempts sent ("requests: 1 (429 ×1)").
func TestSummaryCountsRequestsNotSent(t *testing.T) {
	t.Parallel()
	var answered atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if answered.Add(1) == 1 {
			w.Header().Set("retry-after-ms", "60000")
			w.WriteHeader(429)
			return
		}
		w.Write([]byte(`{"usage":{"prompt_tokens":10,"completion_tokens":1}}`))
	}))
	defer srv.Close()
	out := filepath.Join(t.TempDir(), "results.csv")
	code, stdout, stderr := runCLI(context.Background(), "schedule", "--url", srv.URL, "--api", "openai", "--api-key-env", testKeyEnv,
		"--rate", "100/s", "--duration", "200ms", "--policy", "pace", "--retry-budget", "5s", "-o", out, "--quiet")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	seqs := map[int]bool{}
	unsent := 0
	for _, r := range readResults(t, out) {
		seqs[r.Seq] = true
		if r.NotSent() {
			unsent++
			if r.Decision != results.DecisionGiveUpLocal || r.Error != results.ClassPaced || r.Status != 0 || r.SentMS != results.None {
				t.Errorf("a row not sent: %+v", r)
			}
		}
	}
	sent := int(answered.Load())
	if len(seqs) != 20 || unsent != 20-sent || sent < 1 {
		t.Fatalf("%d of 20 planned seqs have rows; %d sent, %d given up unsent", len(seqs), sent, unsent)
	}
	// The pace holds every send for the advised minute after the first
	// 429: requests sent before it came back may have succeeded.
	want := regexp.MustCompile(`(?m)^requests: 20 planned, ` + strconv.Itoa(sent) + ` attempts? sent \(.*\), ` + strconv.Itoa(unsent) + ` given up without being sent$` +
		`\nsucceeded: ` + strconv.Itoa(sent-1) + ` of 20 planned \(`)
	if !want.MatchString(stdout) {
		t.Errorf("summary:\n%s\nwant it to match %s", stdout, want)
	}
	if strings.Contains(stdout, "no response") {
		t.Errorf("the requests not sent are counted as attempts without a response:\n%s", stdout)
	}
}

// TestRequestsNotSentAreNoFailures: requests the policy gave up on before
// sending them (a fleet's shared pace or cooldown can shed a worker's
// every request) are no failure of the target: --abort-on-fail does not
// count them, and a run of them alone is not "all requests failed".
func TestRequestsNotSentAreNoFailures(t *testing.T) {
	t.Parallel()
	var aborted error
	w := (&failureFlags{abort: "50%", share: 0.5}).window(func(err error) { aborted = err })
	total := newRunTally(analyze.SLO{})
	for seq := range 2 * campaign.AbortWindow {
		r := results.Blank()
		r.Seq, r.Attempt, r.Status, r.SentMS, r.LatencyMS = seq, 1, 0, results.None, results.None
		r.Decision, r.Error = results.DecisionGiveUpLocal, results.ClassCooldown
		w.Add(&r)
		total.observe(&r)
	}
	if aborted != nil {
		t.Errorf("--abort-on-fail stopped a run that sent nothing: %v", aborted)
	}
	if err := (&trafficRun{rf: &runFlags{}}).allFailed(total); err != nil {
		t.Errorf("a run whose requests were all given up unsent: %v", err)
	}
}
