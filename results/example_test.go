package results_test

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/ptuprobe/ptuprobe/results"
)

// Example writes one attempt to a results file and reads it back: the
// writer appends (a new file gets the header), the reader matches columns
// by name.
func Example() {
	dir, _ := os.MkdirTemp("", "results")
	defer os.RemoveAll(dir)
	path := filepath.Join(dir, "results.csv")

	w, err := results.Create(path)
	if err != nil {
		fmt.Println(err)
		return
	}
	rec := results.Blank()
	rec.RunID, rec.Shape, rec.Group = "5f3a9c01", results.ShapeBurst, results.GroupBurst
	rec.Status, rec.RetryAfterMS = 429, "43"
	rec.WaitMS, rec.WaitSource = 43, results.WaitRetryAfterMS
	if err := w.Write(&rec); err != nil {
		fmt.Println(err)
	}
	if err := w.Close(); err != nil {
		fmt.Println(err)
	}

	f, _ := os.Open(path)
	defer f.Close()
	rd, err := results.NewReader(f, path)
	if err != nil {
		fmt.Println(err)
		return
	}
	var got results.Record
	for {
		err := rd.Read(&got)
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			fmt.Println(err)
			return
		}
		fmt.Println(got.Group, got.Status, got.WaitMS, got.WaitSource, got.HasWait())
	}
	// Output:
	// burst-shaped 429 43 retry-after-ms true
}

// ExampleNewWriter writes a results file's header and rows to any
// io.Writer (a pipe, a buffer), as Create does to a file, and reads them
// back.
func ExampleNewWriter() {
	var b bytes.Buffer
	w, err := results.NewWriter(&b)
	if err != nil {
		fmt.Println(err)
		return
	}
	rec := results.Blank()
	rec.RunID, rec.Status, rec.RetryAfterMS = "5f3a9c01", 429, results.FormatMS(43)
	if err := w.Write(&rec); err != nil {
		fmt.Println(err)
	}
	rd, err := results.NewReader(&b, "buffer")
	if err != nil {
		fmt.Println(err)
		return
	}
	var got results.Record
	if err := rd.Read(&got); err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(got.RunID, got.Status, got.RetryAfterMS)
	// Output:
	// 5f3a9c01 429 43
}

// ExampleFormatMS writes milliseconds as a results file's cells hold
// them: no trailing zeros, and an unknown value (None) empty.
func ExampleFormatMS() {
	fmt.Printf("%q %q %q\n", results.FormatMS(43), results.FormatMS(1.5), results.FormatMS(results.None))
	// Output:
	// "43" "1.5" ""
}
