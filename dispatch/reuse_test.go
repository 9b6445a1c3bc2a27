package dispatch

import (
	"context"
	"testing"

	"github.com/ptuprobe/ptuprobe/results"
)

// dirtySender fills each request's first Record in place with an answer
// of every kind of field, after checking that it came blank but for the
// engine's own fields: a first Record reused from an ended request must
// carry nothing of it.
type dirtySender struct{ t *testing.T }

func (s dirtySender) Send(_ context.Context, req Request, record func(*results.Record)) {
	want := results.Blank()
	want.RunID, want.Shape, want.Group, want.Seq, want.Attempt, want.Wave, want.Worker =
		"r", "scheduled", "g", req.Seq, 1, req.First.Wave, req.First.Worker
	want.IntendedMS, want.SentMS = req.First.IntendedMS, req.First.SentMS
	if *req.First != want {
		s.t.Errorf("seq %d: first Record %+v, want %+v", req.Seq, *req.First, want)
	}
	r := req.First
	r.Status, r.Error, r.RetryAfter, r.WaitMS, r.LatencyMS, r.PromptTokens = 500, results.ClassBody, "7", 7000, 12, 99
	record(r)
}

func TestFirstRecordReusedBlank(t *testing.T) {
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
