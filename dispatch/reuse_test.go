package dispatch

import (
	"context"
	"testing"

	"github.com/ptuprobe/ptuprobe/results"
)

// dirtySender writes into each request's row an answer of every kind of
// field, after checking that its first Record came blank but for the
// engine's own fields: the run's Row is shared by every request, and a
// Sender's row (a copy, as client.Target builds it) must leave it as it was.
type dirtySender struct{ t *testing.T }

func (s dirtySender) Send(_ context.Context, req Request, record func(*results.Record)) {
	want := results.Blank()
	want.RunID, want.Shape, want.Group, want.Seq, want.Attempt, want.Wave, want.Worker =
		"r", "scheduled", "g", req.Seq, 1, req.Wave, ""
	want.IntendedMS, want.SentMS = req.IntendedMS, req.SentMS
	if r := req.First(); r != want {
		s.t.Errorf("seq %d: first Record %+v, want %+v", req.Seq, r, want)
	}
	r := req.First()
	r.Status, r.Error, r.RetryAfter, r.WaitMS, r.LatencyMS, r.PromptTokens = 500, results.ClassBody, "7", 7000, 12, 99
	record(&r)
}

func TestFirstRecordBlankEveryRequest(t *testing.T) {
	t.Parallel()
	sink := &memSink{}
	p := &offsets{at: msList(0, 100, 200, 300, 400, 500), wave: []int{results.None, results.None, results.None, results.None, results.None, results.None}}
	out, err := run(t, p, dirtySender{t}, sink, Options{RunID: "r", Shape: "scheduled", Group: "g", MaxInFlight: 1})
	if err != nil || out.Written != 6 {
		t.Fatalf("out=%+v err=%v", out, err)
	}
	for seq, r := range sink.bySeq() {
		if r.Status != 500 || r.Seq != seq || r.IntendedMS != float64(100*seq) {
			t.Errorf("seq %d: row %+v", seq, r)
		}
	}
}
