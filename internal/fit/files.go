package fit

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/ptuprobe/ptuprobe/analyze"
	"github.com/ptuprobe/ptuprobe/internal/atomicfile"
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
		j.Inputs = append(j.Inputs, Input{Name: filepath.Base(p), R: fh})
	}
	if f.EventsFile != "" {
		fh, err := os.Open(f.EventsFile)
		if err != nil {
			return Result{}, err
		}
		defer fh.Close()
		j.Events = &Events{Name: filepath.Base(f.EventsFile), R: fh, Columns: f.Columns, Labels: f.Labels}
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

// ProgressLine returns a Progress that writes a line to w at most once a
// second, from the first second of the fit on (a short fit prints none),
// reading the time from now.
func ProgressLine(w io.Writer, now func() time.Time) func(model string, done, total int) {
	var mu sync.Mutex
	start := now()
	last := start
	return func(model string, done, total int) {
		mu.Lock()
		defer mu.Unlock()
		t := now()
		if t.Sub(start) < time.Second || t.Sub(last) < time.Second {
			return
		}
		last = t
		fmt.Fprintf(w, "fit: %d of about %d points tried (%s model)\n", done, total, model)
	}
}
