package fit

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/ptuprobe/ptuprobe/analyze"
	"github.com/ptuprobe/ptuprobe/internal/atomicfile"
	"github.com/ptuprobe/ptuprobe/internal/num"
	"github.com/ptuprobe/ptuprobe/sim"
)

// Files is a fit of files, as the command line gives it: results files
// to replay (or an events file under Plan), and the profile file to write.
type Files struct {
	Job
	// Results are the results files to replay; EventsFile the published
	// events under Job.Plan, read with Columns and Labels.
	Results    []string
	EventsFile string
	Columns    analyze.ForeignColumns
	Labels     analyze.Labels
	// Output is the profile file written (replaced whole, under a
	// temporary name first); empty writes none.
	Output string
	// Stderr, when set, is told the fit's warnings, and its progress
	// (report, at each Tick) unless Quiet.
	Stderr io.Writer
	Quiet  bool
	// Tick paces the progress lines; nil is every progressEvery.
	Tick <-chan time.Time
}

// RunFiles opens the files, fits, and writes the profile. The profile's
// name is Job.Name, else Output's base name without ".json".
func RunFiles(ctx context.Context, f Files) (Result, error) {
	j := f.Job
	if j.Name == "" && f.Output != "" {
		j.Name = strings.TrimSuffix(filepath.Base(f.Output), ".json")
	}
	for _, p := range f.Results {
		fh, err := os.Open(p)
		if err != nil {
			return Result{}, err
		}
		defer fh.Close()
		j.inputs = append(j.inputs, input{Name: filepath.Base(p), R: fh})
	}
	if f.EventsFile != "" {
		fh, err := os.Open(f.EventsFile)
		if err != nil {
			return Result{}, err
		}
		defer fh.Close()
		j.events = &events{Name: filepath.Base(f.EventsFile), R: fh, Columns: f.Columns, Labels: f.Labels}
	}
	if f.Stderr != nil {
		j.Warn = func(msg string) { fmt.Fprintf(f.Stderr, "warning: %s\n", msg) }
	}
	if f.Stderr != nil && !f.Quiet {
		j.status = &progress{}
		tick := f.Tick
		if tick == nil {
			t := time.NewTicker(progressEvery)
			defer t.Stop()
			tick = t.C
		}
		done := make(chan struct{})
		rctx, stop := context.WithCancel(ctx)
		go func() {
			defer close(done)
			report(rctx, f.Stderr, j.status, tick)
		}()
		defer func() { stop(); <-done }()
	}
	r, err := Run(ctx, j)
	if err != nil || f.Output == "" {
		return r, err
	}
	if err := atomicfile.Write(f.Output, func(w io.Writer) error { return sim.WriteProfile(w, r.Profile) }); err != nil {
		return r, fmt.Errorf("write %s: %w", f.Output, err)
	}
	return r, nil
}

// progressEvery is how often a fit with a progress writer says where it
// is: from the first interval on, whatever the files' size, reading or
// replaying (a fit shorter than it prints none).
const progressEvery = 2 * time.Second

// report writes a line to w at each tick until ctx is done: the rows read,
// then the points tried of about the total. It returns once ctx is done.
func report(ctx context.Context, w io.Writer, st *progress, tick <-chan time.Time) {
	for {
		select {
		case <-ctx.Done():
			return
		case <-tick:
		}
		s := st.Snapshot()
		if s.Model == "" {
			fmt.Fprintf(w, "fit: reading the results: %s rows\n", num.Grouped(float64(s.Rows), 0))
			continue
		}
		fmt.Fprintf(w, "fit: %s of about %s points tried (%s model)\n", num.Grouped(float64(s.Done), 0), num.Grouped(float64(s.Total), 0), s.Model)
	}
}
