package report

import (
	"context"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ptuprobe/ptuprobe/internal/testkit"
)

// testOutputs are three files; the second is written in small pieces,
// long enough to be cut off in the middle.
func testOutputs(version string) []output {
	text := func(s string) func(io.Writer) error {
		return func(w io.Writer) error { _, err := io.WriteString(w, s); return err }
	}
	return []output{
		{"a.csv", text("a " + version + "\n")},
		{"b.csv", func(w io.Writer) error {
			for range 300 {
				if _, err := io.WriteString(w, strings.Repeat(version, 1024/len(version))); err != nil {
					return err
				}
			}
			return nil
		}},
		{"c.md", text("c " + version + "\n")},
	}
}

// TestWriteAllCancelAtEveryCheck: a cancel at any point before the
// renames leaves the directory as it was — the earlier report whole, or no
// directory at all — with no temporary file, and says it was a cancel.
func TestWriteAllCancelAtEveryCheck(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name    string
		earlier bool
	}{
		{"over an earlier report", true},
		{"into a new directory", false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			parent := filepath.Join(t.TempDir(), "new")
			dir := filepath.Join(parent, "report")
			if c.earlier {
				if _, err := writeAll(context.Background(), dir, testOutputs("old")); err != nil {
					t.Fatal(err)
				}
			}
			before := testkit.DirFiles(t, dir)
			for n := 0; ; n++ {
				ctx := &testkit.CancelAfter{Context: context.Background(), N: n}
				written, err := writeAll(ctx, dir, testOutputs("new"))
				if err == nil {
					if len(written) != 3 || n < 1+3+300*1024/(64<<10)+1 {
						t.Errorf("wrote %v after %d looks at the context", written, n)
					}
					break
				}
				if !errors.Is(err, context.Canceled) || !strings.Contains(err.Error(), "report not written") {
					t.Fatalf("cancel at check %d: err = %v", n, err)
				}
				if after := testkit.DirFiles(t, dir); !testkit.SameFiles(after, before) {
					t.Fatalf("cancel at check %d changed the directory: %d files", n, len(after))
				}
				if _, err := os.Stat(parent); !c.earlier && !errors.Is(err, os.ErrNotExist) {
					t.Fatalf("cancel at check %d left the directories it created", n)
				}
			}
			after := testkit.DirFiles(t, dir)
			if len(after) != 3 || after["a.csv"] != "a new\n" || after["c.md"] != "c new\n" {
				t.Errorf("the completed report: %v", after)
			}
		})
	}
}

// TestWriteAllFailure: a file that cannot be written leaves the earlier
// report whole, no temporary file, and an error naming the file.
func TestWriteAllFailure(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	if _, err := writeAll(context.Background(), dir, testOutputs("old")); err != nil {
		t.Fatal(err)
	}
	before := testkit.DirFiles(t, dir)
	full := errors.New("no space left on device")
	outputs := testOutputs("new")
	outputs[2].write = func(w io.Writer) error { return full }
	_, err := writeAll(context.Background(), dir, outputs)
	if !errors.Is(err, full) || !strings.Contains(err.Error(), filepath.Join(dir, "c.md")) {
		t.Fatalf("err = %v, want the failure naming c.md", err)
	}
	if after := testkit.DirFiles(t, dir); !testkit.SameFiles(after, before) {
		t.Fatalf("a failed report changed the directory: %d files", len(after))
	}
}
