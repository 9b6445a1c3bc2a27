package policylab

import (
	"io"
	"path/filepath"
	"runtime"
	"sync"

	"github.com/ptuprobe/ptuprobe/internal/atomicfile"
	"github.com/ptuprobe/ptuprobe/report"
)

// publish writes the lab's outputs into dir — policies.csv, policies.md,
// each group's charts as PNG and SVG (chartFiles names them) and
// report.html — and returns the paths written. Each file is written
// under a temporary name and renamed; the files are written at once, on
// every core, and a failure returns the paths before the first that
// failed (the files after it may have been written too).
func publish(dir string, s Sweep, setup Setup) ([]string, error) {
	type step struct {
		name  string
		write func(io.Writer) error
	}
	steps := []step{
		{csvFile, func(w io.Writer) error { return writeCSV(w, s) }},
		{MarkdownFile, func(w io.Writer) error { return writeMarkdown(w, s) }},
	}
	if len(s.Conditions) > 0 {
		steps = append(steps, step{gridFile, func(w io.Writer) error { return writeGridCSV(w, s) }})
	}
	for _, c := range chartFiles(s, judge(s)) {
		steps = append(steps,
			step{c.base + ".png", func(w io.Writer) error { return c.draw(w, report.PNG) }},
			step{c.base + ".svg", func(w io.Writer) error { return c.draw(w, report.SVG) }})
	}
	steps = append(steps, step{report.HTMLFile, func(w io.Writer) error { return writeHTML(w, s, setup) }})
	// The files are independent: written on every core (the charts, drawn
	// at full resolution, are a second of one core's CPU after the lab's
	// runs; report.html draws them again, inline, in parallel too). The
	// paths come back in the steps' order, up to the first that failed.
	errs := make([]error, len(steps))
	cores := make(chan struct{}, max(1, runtime.GOMAXPROCS(0)))
	var wg sync.WaitGroup
	for i, st := range steps {
		cores <- struct{}{}
		wg.Go(func() {
			defer func() { <-cores }()
			errs[i] = atomicfile.Write(filepath.Join(dir, st.name), st.write)
		})
	}
	wg.Wait()
	var written []string
	for i, st := range steps {
		if errs[i] != nil {
			return written, errs[i]
		}
		written = append(written, filepath.Join(dir, st.name))
	}
	return written, nil
}
