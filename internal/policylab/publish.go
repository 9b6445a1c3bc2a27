package policylab

import (
	"io"
	"path/filepath"

	"github.com/ptuprobe/ptuprobe/internal/atomicfile"
	"github.com/ptuprobe/ptuprobe/report"
)

// publish writes the lab's outputs into dir — policies.csv, policies.md,
// each group's charts as PNG and SVG (chartFiles names them) and
// report.html — and returns the paths written. Each file is written
// under a temporary name and renamed.
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
	var written []string
	for _, st := range steps {
		path := filepath.Join(dir, st.name)
		if err := atomicfile.Write(path, st.write); err != nil {
			return written, err
		}
		written = append(written, path)
	}
	return written, nil
}
