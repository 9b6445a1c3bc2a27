package publish

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/ptuprobe/ptuprobe/analyze"
	"github.com/ptuprobe/ptuprobe/internal/valid"
	"github.com/ptuprobe/ptuprobe/report"
)

// TestLoadWindow: the Job's window reaches the overshoot picture (the
// default when zero), a window out of bounds is a *valid.Error naming the
// field, and only ptuprobe results get the picture's charts.
func TestLoadWindow(t *testing.T) {
	t.Parallel()
	in := resultsInput(t, t.TempDir())
	for _, w := range []time.Duration{0, 10 * time.Second} {
		out := filepath.Join(t.TempDir(), "report")
		res, err := Run(context.Background(), Job{Paths: []string{in}, OutDir: out, MinGroup: 1, LoadWindow: w})
		if err != nil {
			t.Fatal(err)
		}
		want := w
		if want == 0 {
			want = analyze.DefaultLoadWindow
		}
		if o := res.Analysis.Overshoot; o == nil || o.Window != want {
			t.Fatalf("window %v: overshoot %+v", w, o)
		}
		for _, name := range []string{report.OvershootPNGFile, report.OvershootSVGFile} {
			if _, err := os.Stat(filepath.Join(out, name)); err != nil {
				t.Errorf("window %v: %v", w, err)
			}
		}
	}
	for _, w := range []time.Duration{-time.Second, time.Microsecond, 2 * time.Hour} {
		_, err := Run(context.Background(), Job{Paths: []string{in}, OutDir: t.TempDir(), MinGroup: 1, LoadWindow: w})
		var v *valid.Error
		if !errors.As(err, &v) || v.Field() != "LoadWindow" {
			t.Errorf("window %v: err = %v, want a *valid.Error for LoadWindow", w, err)
		}
	}
	out := filepath.Join(t.TempDir(), "report")
	res, err := Run(context.Background(), Job{Paths: []string{upstreamEvents}, OutDir: out, MinGroup: 1, Foreign: analyze.ForeignColumns{Group: "source"}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(out, report.OvershootPNGFile)); res.Analysis.Overshoot != nil || err == nil {
		t.Errorf("a foreign CSV: overshoot %+v, chart written: %v", res.Analysis.Overshoot, err == nil)
	}
}
