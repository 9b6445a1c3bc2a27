package publish

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/ptuprobe/ptuprobe/analyze"
	"github.com/ptuprobe/ptuprobe/internal/valid"
	"github.com/ptuprobe/ptuprobe/report"
)

// Job is one analysis: inputs, what to publish and where, and thresholds.
type Job struct {
	Paths    []string
	OutDir   string
	Labels   analyze.Labels
	Columns  []analyze.Statistic
	MinGroup int
	LogX     bool
	Timeline bool
	Foreign  analyze.ForeignColumns
	// GroupBy is what ptuprobe results are grouped by: their group (the
	// default) or their dialect.
	GroupBy analyze.GroupBy
	// LoadWindow is the trailing window of the load offered before each
	// 429 (analyze.OfferedLoad); 0 means analyze.DefaultLoadWindow.
	LoadWindow time.Duration
	// SLO, when named, counts each group's goodput (analyze.WithSLO); one
	// that names ttft, tpot or itl is refused on inputs with no streamed
	// answer (analyze.ErrNoStream, in a BadInputError).
	SLO analyze.SLO
	// Baseline, when set, is a previous run's results file, or a report
	// directory holding one (results.csv): it is analyzed as the inputs
	// are (same labels, grouping, SLO and minimum group) and every figure
	// compared with it (analyze.Compare, Analysis.Baseline).
	Baseline string
	// Thresholds are evaluated over the Analysis once it is written.
	Thresholds []analyze.Threshold
	// Command and Settings name the command and the flags given to it, for
	// report.html (report.Options).
	Command  string
	Settings []report.Setting
	// Progress, when set, is given the total input size before reading and
	// returns a writer that sees every byte read (a progress bar) and a
	// func called when reading ends; nil means no progress.
	Progress func(total int64) (io.Writer, func())
}

// Result is what a Job produced.
type Result struct {
	Analysis *analyze.Analysis
	Written  []string // paths, in a stable order
	Verdicts []analyze.Verdict
}

// Breached counts the thresholds that hold (the run fails).
func (r Result) Breached() int {
	n := 0
	for _, v := range r.Verdicts {
		if v.Breached {
			n++
		}
	}
	return n
}

// ErrInterrupted is returned when ctx ended before the report was written
// whole; nothing is then written under a published name, and no temporary
// file is left.
var ErrInterrupted = errors.New("interrupted before the report was written")

// Validate checks the job before any work: a usage problem is a
// *valid.Error naming the Job field.
func (j Job) Validate() error {
	switch {
	case len(j.Paths) == 0:
		return valid.Errorf("Paths", "name no input file: give one or more results files or CSVs")
	case strings.TrimSpace(j.OutDir) == "":
		return valid.Errorf("OutDir", "is empty")
	case j.MinGroup < 1:
		return valid.Errorf("MinGroup", "is %d: want at least 1", j.MinGroup)
	case j.LoadWindow != 0 && (j.LoadWindow < analyze.MinLoadWindow || j.LoadWindow > analyze.MaxLoadWindow):
		return valid.Errorf("LoadWindow", "is %s: want %s to %s", j.LoadWindow, analyze.MinLoadWindow, analyze.MaxLoadWindow)
	}
	return nil
}

// Run reads every input, writes the report into OutDir and evaluates the
// thresholds. A bad input (a missing file, a directory, a CSV without the
// value column) is an *analyze.BadInputError. ctx is honoured at every
// stage — while reading, before and after the analysis, between the files
// of the report and within long ones — and the report is all or nothing
// (report.Write): a cancel before it is complete returns ErrInterrupted
// and leaves OutDir as it was.
func Run(ctx context.Context, j Job) (Result, error) {
	var res Result
	if err := j.Validate(); err != nil {
		return res, err
	}
	files, total, err := openAll(ctx, j.Paths)
	defer func() {
		for _, f := range files {
			f.Close()
		}
	}()
	if err != nil {
		return res, err
	}
	// A read from a pipe, a FIFO or a terminal waits for its writer, which
	// may never write again; a cancel then expires the read at once (such
	// files are in the runtime's poller; a regular file's read does not
	// wait, and SetReadDeadline refuses it harmlessly).
	stop := context.AfterFunc(ctx, func() {
		for _, f := range files {
			_ = f.SetReadDeadline(time.Now())
		}
	})
	defer stop()
	budget, restore := newMemoryBudget(total)
	defer restore()
	tally := analyze.NewTally(j.Timeline, analyze.GroupedBy(j.GroupBy), analyze.OfferedLoad(j.LoadWindow), analyze.WithSLO(j.SLO))
	var seen io.Writer
	if j.Progress != nil {
		var finish func()
		seen, finish = j.Progress(total)
		defer finish()
	}
	for i, f := range files {
		if ctx.Err() != nil {
			return res, ErrInterrupted
		}
		r := budget.reader(f)
		if seen != nil {
			r = io.TeeReader(r, seen)
		}
		in := analyze.Input{Name: j.Paths[i], Ordinal: i + 1}
		if st, err := f.Stat(); err == nil && st.Mode().IsRegular() {
			// Open until the analysis, which may read it again (a large
			// results file's overshoot picture); a pipe cannot be.
			in.At = f
		}
		if err := tally.Read(ctx, r, in, j.Foreign); err != nil {
			if ctx.Err() != nil {
				return res, ErrInterrupted // whatever error the expired read became
			}
			return res, err
		}
	}
	budget.follow(analysisHeadroom)
	a, err := analysis(ctx, tally, j.Labels, j.MinGroup)
	if err != nil {
		return res, err
	}
	if err := compareAndCheck(ctx, j, a); err != nil {
		return res, err
	}
	res.Analysis = a
	if ctx.Err() != nil {
		return res, ErrInterrupted
	}
	res.Written, err = report.Write(ctx, j.OutDir, a, report.Options{
		Columns: j.Columns, LogX: j.LogX, Timeline: j.Timeline, Command: j.Command, Settings: j.Settings,
	})
	if err != nil {
		return res, interrupted(ctx, err)
	}
	for _, t := range j.Thresholds {
		res.Verdicts = append(res.Verdicts, t.Evaluate(a))
	}
	return res, nil
}

// compareAndCheck refuses an SLO that a's inputs cannot measure, and sets
// a beside j's baseline run, when it names one.
func compareAndCheck(ctx context.Context, j Job, a *analyze.Analysis) error {
	if a.HasRequests() {
		if err := a.CheckSLO(); err != nil {
			return err
		}
	}
	if j.Baseline == "" {
		return nil
	}
	base, err := baseline(ctx, j)
	if err != nil {
		return err
	}
	a.Baseline = analyze.Compare(a, base)
	return nil
}

// BaselineFile is the results file a report directory given as a
// baseline holds (characterize writes it there).
const BaselineFile = "results.csv"

// baseline analyzes j.Baseline: a results file, or a directory holding
// BaselineFile.
func baseline(ctx context.Context, j Job) (*analyze.Analysis, error) {
	path := j.Baseline
	if st, err := os.Stat(path); err == nil && st.IsDir() {
		path = filepath.Join(path, BaselineFile)
	}
	f, err := open(ctx, path)
	if errors.Is(err, ErrInterrupted) {
		return nil, err
	}
	if err != nil {
		return nil, &analyze.BadInputError{Setting: "Baseline", Err: fmt.Errorf("cannot read the baseline: %w", err)}
	}
	defer f.Close()
	tally := analyze.NewTally(false, analyze.GroupedBy(j.GroupBy), analyze.WithSLO(j.SLO))
	if err := tally.Read(ctx, f, analyze.Input{Name: path, Ordinal: 1}, j.Foreign); err != nil {
		if ctx.Err() != nil {
			return nil, ErrInterrupted
		}
		return nil, &analyze.BadInputError{Setting: "Baseline", Err: fmt.Errorf("baseline: %w", err)}
	}
	base, err := analysis(ctx, tally, j.Labels, j.MinGroup)
	if err != nil {
		return nil, err
	}
	if !base.HasRequests() {
		return nil, &analyze.BadInputError{Setting: "Baseline", Err: fmt.Errorf("the baseline %s holds no ptuprobe results: give a previous run's results file, or the report directory that holds its %s", path, BaselineFile)}
	}
	return base, nil
}

// analysis is tally.Analysis, which does not look at ctx: sorting millions
// of waits takes a second or more. A cancel returns ErrInterrupted at once
// and leaves the analysis to finish in the background, its result unused.
func analysis(ctx context.Context, tally *analyze.Tally, labels analyze.Labels, minGroup int) (*analyze.Analysis, error) {
	if ctx.Err() != nil {
		return nil, ErrInterrupted
	}
	type result struct {
		a   *analyze.Analysis
		err error
	}
	done := make(chan result, 1)
	go func() {
		a, err := tally.FinalAnalysis(labels, minGroup)
		done <- result{a, err}
	}()
	select {
	case r := <-done:
		return r.a, r.err
	case <-ctx.Done():
		return nil, ErrInterrupted
	}
}

func interrupted(ctx context.Context, err error) error {
	if ctx.Err() != nil && errors.Is(err, ctx.Err()) {
		return ErrInterrupted
	}
	return err
}

// openAll opens every path before any is read, so a missing or unreadable
// file is reported before any work.
func openAll(ctx context.Context, paths []string) ([]*os.File, int64, error) {
	var files []*os.File
	var total int64
	for _, p := range paths {
		f, err := open(ctx, p)
		if errors.Is(err, ErrInterrupted) {
			return files, 0, err
		}
		if err != nil {
			return files, 0, &analyze.BadInputError{Err: fmt.Errorf("cannot read input: %w", err)}
		}
		files = append(files, f)
		st, err := f.Stat()
		if err != nil {
			return files, 0, &analyze.BadInputError{Err: fmt.Errorf("cannot read input %s: %w", p, err)}
		}
		if st.IsDir() {
			return files, 0, &analyze.BadInputError{Err: fmt.Errorf("cannot read input %s: it is a directory", p)}
		}
		total += st.Size()
	}
	return files, total, nil
}

// open is os.Open that a cancel ends at once. Opening a FIFO waits, in the
// system call, until a writer opens it too, which no deadline reaches: the
// open is left to a goroutine, which closes the file should it ever open
// after a cancel (in the CLI the process has exited by then).
func open(ctx context.Context, path string) (*os.File, error) {
	type opened struct {
		f   *os.File
		err error
	}
	done := make(chan opened) // unbuffered: a send is a hand-over
	abandoned := make(chan struct{})
	go func() {
		f, err := os.Open(path)
		select {
		case done <- opened{f, err}:
		case <-abandoned:
			if f != nil {
				f.Close()
			}
		}
	}()
	select {
	case o := <-done:
		return o.f, o.err
	case <-ctx.Done():
		close(abandoned)
		return nil, ErrInterrupted
	}
}
