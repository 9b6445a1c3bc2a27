package cmd

import (
	"fmt"
	"io"
	"os"
	"sync"
	"time"

	"github.com/schollz/progressbar/v3"
	"golang.org/x/term"

	"github.com/ptuprobe/ptuprobe/analyze"
	"github.com/ptuprobe/ptuprobe/report"
	"github.com/ptuprobe/ptuprobe/results"
)

// runTally counts a run's records, as they complete, for progress lines
// and the end-of-run summary: the analysis's own tally, read live. It
// counts the advised waits per value, so that its memory does not grow
// with the run.
type runTally struct{ t *analyze.Tally }

func newRunTally(slo analyze.SLO) *runTally {
	return &runTally{t: analyze.NewTally(false, analyze.CountedWaits(), analyze.WithSLO(slo))}
}

func (r *runTally) observe(rec *results.Record) { r.t.Observe(rec) }

func (r *runTally) counts() (done, n429 int) { return r.t.Counts() }

// writeSummary prints the run summary; a run's group labels were checked
// before it started, so the analysis cannot fail on them.
func (r *runTally) writeSummary(w io.Writer) {
	a, err := r.t.Analysis(nil, 1)
	if err != nil {
		fmt.Fprintf(w, "summary unavailable: %v\n", err)
		return
	}
	_ = report.WriteRunSummary(w, a)
}

// progress shows a run's advance on stderr: a bar on a terminal, a plain
// line every interval otherwise, nothing when quiet.
type progress struct {
	bar   *progressbar.ProgressBar
	label string
	tally *runTally
	stop  chan struct{}
	wg    sync.WaitGroup
	start time.Time
}

func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	return ok && term.IsTerminal(int(f.Fd()))
}

// newProgress starts the progress of total requests (most: at most
// total, the plan may grow to it or end short of it: campaign's
// Plan.Bound); with a start ahead (a common timeline) it says it waits
// for it until then.
func newProgress(w io.Writer, quiet bool, label string, total int, most bool, startAt time.Time, every time.Duration, tally *runTally) *progress {
	p := &progress{tally: tally, start: time.Now(), label: label}
	of := fmt.Sprintf("/%d", total)
	if most {
		p.label = fmt.Sprintf("%s (at most %d)", label, total)
		of = fmt.Sprintf(" of at most %d", total)
	}
	if startAt.After(p.start) {
		p.start = startAt
	}
	if quiet {
		return p
	}
	if isTerminal(w) {
		desc := p.label
		if time.Now().Before(p.start) {
			desc += ": waiting for the start"
		}
		p.bar = progressbar.NewOptions(total,
			progressbar.OptionSetWriter(w),
			progressbar.OptionSetDescription(desc),
			progressbar.OptionShowCount(),
			progressbar.OptionSetElapsedTime(true),
			progressbar.OptionSetPredictTime(false),
			progressbar.OptionThrottle(100*time.Millisecond),
			progressbar.OptionClearOnFinish(),
		)
		return p
	}
	p.stop = make(chan struct{})
	p.wg.Add(1)
	go func() {
		defer p.wg.Done()
		t := time.NewTicker(every)
		defer t.Stop()
		for {
			select {
			case <-t.C:
				if wait := time.Until(p.start); wait > 0 {
					fmt.Fprintf(w, "%s: waiting for the start (in %s)\n", label, wait.Round(time.Second))
					continue
				}
				done, n429 := tally.counts()
				fmt.Fprintf(w, "%s: %d%s done, %d 429s, %s elapsed\n", label, done, of, n429, time.Since(p.start).Round(time.Second))
			case <-p.stop:
				return
			}
		}
	}()
	return p
}

// add records one completed request.
func (p *progress) add() {
	if p.bar != nil {
		_, n := p.tally.counts()
		p.bar.Describe(fmt.Sprintf("%s: %d 429s", p.label, n))
		_ = p.bar.Add(1)
	}
}

func (p *progress) finish() {
	if p.bar != nil {
		_ = p.bar.Finish()
	}
	if p.stop != nil {
		close(p.stop)
		p.wg.Wait()
	}
}
