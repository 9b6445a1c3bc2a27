package results

import (
	"bytes"
	"errors"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"unicode"
	"unicode/utf8"
)

func sample(seq int) Record {
	r := Blank()
	r.RunID, r.Shape, r.Group = "a1b2c3d4", ShapeBurst, GroupBurst
	r.Seq, r.Attempt, r.Wave = seq, 1, seq/10
	r.IntendedMS, r.SentMS, r.TTFBMS, r.LatencyMS = 1000, 1000.25, 12.5, 40.125
	r.Status = 429
	r.RetryAfterMS, r.RetryAfter = "43", "Wed, 21 Oct 2015 07:28:00 GMT"
	r.WaitMS, r.WaitSource = 43, WaitRetryAfterMS
	r.Spillover = seq%2 == 0
	r.RatelimitRemainingRequests, r.UtilizationPct = 7, 101.5
	r.PromptTokens, r.CachedTokens, r.CompletionTokens, r.MaxTokens = 1000, 128, 60, 100
	r.Dialect = DialectAzure
	r.ResetRequestsMS, r.ResetTokensMS, r.LimitRequests, r.LimitTokens = 1000, 360000.5, 60, 150000
	r.Worker = "1/4"
	r.PromptTokensSent = 1007 + seq
	r.TTFTMS, r.ITLP50MS, r.ITLMaxMS, r.TPOTMS = 20.5, 0.25, 9.125, 0.328
	return r
}

func TestRoundTrip(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "results.csv")
	w, err := Create(path)
	if err != nil {
		t.Fatal(err)
	}
	blank := Blank()
	blank.RunID, blank.Shape, blank.Group, blank.Seq, blank.Attempt = "ffffffff", ShapeScheduled, `quoted "group"`, 3, 1
	blank.Error = ClassReset
	want := []Record{sample(0), sample(1), blank}
	for i := range want {
		if err := w.Write(&want[i]); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	// Appending to an existing file keeps its header and adds rows.
	w, err = Create(path)
	if err != nil {
		t.Fatal(err)
	}
	extra := sample(2)
	if err := w.Write(&extra); err != nil {
		t.Fatal(err)
	}
	w.Close()
	want = append(want, extra)

	got := readAll(t, path)
	if len(got) != len(want) {
		t.Fatalf("read %d records, want %d", len(got), len(want))
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("record %d:\n got %+v\nwant %+v", i, got[i], want[i])
		}
	}
	b, _ := os.ReadFile(path)
	if n := bytes.Count(b, []byte("run_id,")); n != 1 {
		t.Errorf("header appears %d times", n)
	}
}

func readAll(t *testing.T, path string) []Record {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	rd, err := NewReader(f, path)
	if err != nil {
		t.Fatal(err)
	}
	var out []Record
	for {
		var r Record
		err := rd.Read(&r)
		if errors.Is(err, io.EOF) {
			return out
		}
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, r)
	}
}

func TestCreateRejectsForeignHeader(t *testing.T) {
	t.Parallel()
	cases := []struct{ name, content string }{
		{"another CSV", "a,b,c\n1,2,3\n"},
		{"an older header", strings.Join(Columns[:requiredColumns], ",") + "\n"},
		// Create reads no more of the first line than a header can take.
		{"a header run on for megabytes", header + strings.Repeat("x", 3*MaxLine)},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			path := filepath.Join(t.TempDir(), "other.csv")
			if err := os.WriteFile(path, []byte(c.content), 0o644); err != nil {
				t.Fatal(err)
			}
			_, err := Create(path)
			if err == nil || !strings.Contains(err.Error(), path) || !strings.Contains(err.Error(), "not a ptuprobe results file") {
				t.Fatalf("err = %v, want one naming %s", err, path)
			}
			if b, _ := os.ReadFile(path); string(b) != c.content {
				t.Fatal("the file was modified")
			}
		})
	}
}

// TestTruncatedLastLine: the reader skips and reports a last line without
// a newline.
func TestTruncatedLastLine(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "results.csv")
	writeRows(t, path, sample(0))
	appendRaw(t, path, "a1b2c3d4,burst,burst-shaped,1,1,0,10")

	fh, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer fh.Close()
	rd, err := NewReader(fh, path)
	if err != nil {
		t.Fatal(err)
	}
	var rec Record
	if err := rd.Read(&rec); err != nil {
		t.Fatal(err)
	}
	if err := rd.Read(&rec); !errors.Is(err, io.EOF) {
		t.Fatalf("err = %v, want EOF", err)
	}
	if rd.Truncated() != 3 {
		t.Fatalf("Truncated() = %d, want 3", rd.Truncated())
	}
}

// TestCreateDropsTornLine: a writer appending after a crash removes the
// partial last line — even one with every field, which a newline would
// turn into a row that reads — and reports how many bytes it dropped.
func TestCreateDropsTornLine(t *testing.T) {
	t.Parallel()
	full := string(appendCSV(nil, ptr(sample(7))))
	full = full[:len(full)-1] // every field, no newline
	cases := []struct {
		name, torn string
	}{
		{"every field, no newline", full},
		{"a few fields", "a1b2c3d4,burst,burst-shaped,1,1,0,10"},
		{"a carriage return without its newline", full + "\r"},
		{"one byte", "a"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			path := filepath.Join(t.TempDir(), "results.csv")
			writeRows(t, path, sample(0), sample(1))
			appendRaw(t, path, c.torn)

			w, err := Create(path)
			if err != nil {
				t.Fatal(err)
			}
			if got := w.Repaired(); got != int64(len(c.torn)) {
				t.Errorf("Repaired() = %d, want %d", got, len(c.torn))
			}
			r := sample(5)
			if err := w.Write(&r); err != nil {
				t.Fatal(err)
			}
			if err := w.Close(); err != nil {
				t.Fatal(err)
			}
			got := readAll(t, path) // fails on any unreadable row
			want := []Record{sample(0), sample(1), sample(5)}
			if len(got) != len(want) {
				t.Fatalf("read %d rows, want %d: %+v", len(got), len(want), got)
			}
			for i := range want {
				if got[i] != want[i] {
					t.Errorf("row %d = %+v, want %+v", i, got[i], want[i])
				}
			}
		})
	}
}

// TestCreateEndsOfFile: a file that is the header alone without its
// newline gets the newline; a last line longer than MaxLine is not a row
// cut short, and the file is refused and left as it was.
func TestCreateEndsOfFile(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name, content string
		wantErr       string // "" when Create succeeds
		rows          int    // rows read back after one Write
	}{
		{"the header without its newline", header, "", 1},
		{"a header and a row", header + "\n" + string(appendCSV(nil, ptr(sample(0)))), "", 2},
		{"a last line over the cap", header + "\n" + strings.Repeat("x", MaxLine+1), "more than 1048576 bytes without a newline", 0},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			path := filepath.Join(t.TempDir(), "results.csv")
			if err := os.WriteFile(path, []byte(c.content), 0o644); err != nil {
				t.Fatal(err)
			}
			w, err := Create(path)
			if c.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), c.wantErr) || strings.Count(err.Error(), path) != 1 {
					t.Fatalf("err = %v, want one naming %s once with %q", err, path, c.wantErr)
				}
				if b, _ := os.ReadFile(path); string(b) != c.content {
					t.Fatal("the file was modified")
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if w.Repaired() != 0 {
				t.Errorf("Repaired() = %d, want 0", w.Repaired())
			}
			r := sample(3)
			w.Write(&r)
			if err := w.Close(); err != nil {
				t.Fatal(err)
			}
			if got := readAll(t, path); len(got) != c.rows {
				t.Fatalf("read %d rows, want %d", len(got), c.rows)
			}
		})
	}
}

// TestCreateNonRegular: a pipe, a FIFO or a device cannot be read back or
// synced; Create writes the header, and every row reaches the reader with
// no error at Close.
func TestCreateNonRegular(t *testing.T) {
	t.Parallel()
	fifo := filepath.Join(t.TempDir(), "rows.fifo")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Skipf("no FIFO here: %v", err)
	}
	cases := []struct {
		name, path string
		read       bool // a reader at the other end checks what arrived
	}{
		{"FIFO", fifo, true},
		{"/dev/null", os.DevNull, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			got := make(chan []byte, 1)
			if c.read {
				go func() {
					// Opening the read end lets the writer's open return.
					f, err := os.Open(c.path)
					if err != nil {
						got <- []byte(err.Error())
						return
					}
					defer f.Close()
					b, _ := io.ReadAll(f)
					got <- b
				}()
			}
			w, err := Create(c.path)
			if err != nil {
				t.Fatal(err)
			}
			var want bytes.Buffer
			ww, _ := NewWriter(&want)
			for i := range 3 {
				r := sample(i)
				if err := w.Write(&r); err != nil {
					t.Fatal(err)
				}
				ww.Write(&r)
			}
			if err := w.Close(); err != nil {
				t.Fatalf("Close: %v", err)
			}
			if c.read {
				if b := <-got; !bytes.Equal(b, want.Bytes()) {
					t.Errorf("the reader got %q, want %q", b, want.Bytes())
				}
			}
		})
	}
}

// TestCreateErrorsNamePathOnce: every failure of the results file names
// the file once.
func TestCreateErrorsNamePathOnce(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	foreign := filepath.Join(dir, "foreign.csv")
	if err := os.WriteFile(foreign, []byte("a,b\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	cases := []struct{ name, path, want string }{
		{"a missing directory", filepath.Join(dir, "missing", "results.csv"), "no such file"},
		{"a directory", dir, "is a directory"},
		{"a foreign header", foreign, "not a ptuprobe results file"},
		{"a full device", "/dev/full", "no space left"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			if _, err := os.Stat(filepath.Dir(c.path)); err != nil && c.path == "/dev/full" {
				t.Skip("no /dev/full")
			}
			w, err := Create(c.path)
			if err == nil {
				w.Close()
				t.Fatal("Create succeeded")
			}
			if msg := err.Error(); !strings.Contains(msg, c.want) || strings.Count(msg, c.path) != 1 || strings.Contains(msg, "\n") {
				t.Errorf("err = %q: want one line naming %s once, with %q", msg, c.path, c.want)
			}
		})
	}
}

// writeRows writes recs to a new results file at path.
func writeRows(t *testing.T, path string, recs ...Record) {
	t.Helper()
	w, err := Create(path)
	if err != nil {
		t.Fatal(err)
	}
	for i := range recs {
		if err := w.Write(&recs[i]); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
}

// appendRaw appends s to path as it is: what a killed run leaves.
func appendRaw(t *testing.T, path, s string) {
	t.Helper()
	f, err := os.OpenFile(path, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, err := f.WriteString(s); err != nil {
		t.Fatal(err)
	}
}

func ptr[T any](v T) *T { return &v }

func TestReaderErrorsNameFileAndLine(t *testing.T) {
	t.Parallel()
	in := strings.Join(Columns, ",") + "\n" + "x,burst,g,notanumber,1,,0,0,,1,429,,,,,none,0,,,,,,,\n"
	rd, err := NewReader(strings.NewReader(in), "in.csv")
	if err != nil {
		t.Fatal(err)
	}
	var r Record
	err = rd.Read(&r)
	if err == nil || !strings.Contains(err.Error(), "in.csv line 2") || !strings.Contains(err.Error(), "seq") {
		t.Fatalf("err = %v", err)
	}
}

// TestReaderMatchesColumnsByName: older files lack trailing columns, newer
// ones may carry columns this reader does not know, anywhere after the
// required prefix.
func TestReaderMatchesColumnsByName(t *testing.T) {
	t.Parallel()
	required := strings.Join(Columns[:requiredColumns], ",")
	row := "x,scheduled,g,0,1,,5,6,7,8,429,,12,,12,retry-after-ms,1"
	cases := []struct {
		name, header, row    string
		maxTokens, remaining int
	}{
		{"older file, required columns only", required, row, None, None},
		{"unknown column after the required ones", required + ",node,max_tokens", row + ",n-3,100", 100, None},
		{"known columns in another order", required + ",max_tokens,ratelimit_remaining_requests", row + ",100,7", 100, 7},
		{"unknown trailing column", strings.Join(Columns, ",") + ",policy", row + ",7,,,,,,100,always", 100, 7},
		// Written before the dialect columns: they read as absent.
		{"file before the dialect columns", strings.Join(Columns[:slices.Index(Columns, "dialect")], ","), row + ",7,,,,,,100,,,0", 100, 7},
		// Written before the worker column: one process sent the plan.
		{"file before the worker column", strings.Join(Columns[:slices.Index(Columns, "worker")], ","), row + ",7,,,,,,100,,,0,,,,,", 100, 7},
		// Written before prompt_tokens_sent: the count reads as absent.
		{"file before prompt_tokens_sent", strings.Join(Columns[:slices.Index(Columns, "prompt_tokens_sent")], ","), row + ",7,,,,,,100,,,0,,,,,,", 100, 7},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			rd, err := NewReader(strings.NewReader(c.header+"\n"+c.row+"\n"), "f.csv")
			if err != nil {
				t.Fatal(err)
			}
			var r Record
			if err := rd.Read(&r); err != nil {
				t.Fatal(err)
			}
			if r.WaitMS != 12 || !r.Spillover || r.Wave != None || r.MaxTokens != c.maxTokens || r.RatelimitRemainingRequests != c.remaining {
				t.Fatalf("got %+v", r)
			}
			if r.Dialect != "" || r.ResetRequestsMS != None || r.ResetTokensMS != None || r.LimitRequests != None || r.LimitTokens != None {
				t.Fatalf("dialect columns absent from the file, read as %+v", r)
			}
			if r.Worker != "" {
				t.Fatalf("worker absent from the file, read as %q", r.Worker)
			}
			if r.PromptTokensSent != None {
				t.Fatalf("prompt_tokens_sent absent from the file, read as %d", r.PromptTokensSent)
			}
		})
	}
}

func TestNotResults(t *testing.T) {
	t.Parallel()
	for _, in := range []string{"", "source,benchmark_id,retry_after_ms\n"} {
		if _, err := NewReader(strings.NewReader(in), "x.csv"); !errors.Is(err, ErrNotResults) {
			t.Errorf("NewReader(%q) err = %v", in, err)
		}
	}
}

func TestConcurrentWrites(t *testing.T) {
	t.Parallel()
	var buf bytes.Buffer
	w, _ := NewWriter(&buf)
	var wg sync.WaitGroup
	for g := 0; g < 8; g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < 100; i++ {
				r := sample(i)
				w.Write(&r)
			}
		}()
	}
	wg.Wait()
	if w.Rows() != 800 || bytes.Count(buf.Bytes(), []byte("\n")) != 801 {
		t.Fatalf("rows = %d, lines = %d", w.Rows(), bytes.Count(buf.Bytes(), []byte("\n")))
	}
}

func TestCleanHeader(t *testing.T) {
	t.Parallel()
	long := strings.Repeat("9", 100)
	tests := []struct{ name, in, want string }{
		{"empty", "", ""},
		{"trimmed", "  43 ", "43"},
		{"line break dropped", "4\r\n3", "43"},
		{"tab, NUL and DEL dropped", "\t4\x003\x7f", "43"},
		{"C1 control dropped", "4\u00853", "43"},
		{"cut at MaxHeaderLen", long, long[:MaxHeaderLen]},
		{"leading spaces do not count", "   " + long, long[:MaxHeaderLen]},
		{"valid UTF-8 kept", "7 é €", "7 é €"},
		{"invalid bytes replaced", "\xff\xfe7", "\ufffd\ufffd7"},
		{"truncated rune replaced", "25\xe2\x82", "25\ufffd\ufffd"},
		{"overlong encoding replaced", "\xc0\xaf", "\ufffd\ufffd"},
		{"surrogate replaced", "\xed\xa0\x80", "\ufffd\ufffd\ufffd"},
		{"cut at a rune boundary", "7" + strings.Repeat("é", 40), "7" + strings.Repeat("é", 31)},
		{"cut after replacement", "\xff\xfe7" + strings.Repeat("é", 40), "\ufffd\ufffd7" + strings.Repeat("é", 28)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			if got := CleanHeader(tt.in); got != tt.want {
				t.Errorf("CleanHeader(%q) = %q, want %q", tt.in, got, tt.want)
			}
		})
	}
}

// FuzzCleanHeader: whatever a target sends, the value recorded is valid
// UTF-8 without control characters, at most MaxHeaderLen bytes, trimmed,
// and cleaning it again changes nothing.
func FuzzCleanHeader(f *testing.F) {
	for _, s := range []string{"43", " 4\r\n3 ", "\xff\xfe7ééé", "25\xe2\x82", strings.Repeat("€", 30)} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, in string) {
		out := CleanHeader(in)
		if !utf8.ValidString(out) || len(out) > MaxHeaderLen || strings.Trim(out, " ") != out {
			t.Fatalf("CleanHeader(%q) = %q", in, out)
		}
		for _, r := range out {
			if unicode.IsControl(r) {
				t.Fatalf("CleanHeader(%q) = %q holds control %U", in, out, r)
			}
		}
		if again := CleanHeader(out); again != out {
			t.Fatalf("not idempotent: %q, then %q", out, again)
		}
	})
}

func FuzzReader(f *testing.F) {
	var buf bytes.Buffer
	w, _ := NewWriter(&buf)
	r := sample(1)
	w.Write(&r)
	f.Add(buf.Bytes())
	f.Add([]byte(strings.Join(Columns, ",") + "\n\"unterminated\n"))
	f.Add([]byte(strings.Join(Columns, ",") + "\na,b,c\n"))
	f.Add([]byte("run_id\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		rd, err := NewReader(bytes.NewReader(data), "fuzz.csv")
		if err != nil {
			return
		}
		for i := 0; i < 10000; i++ {
			var rec Record
			err := rd.Read(&rec)
			if errors.Is(err, io.EOF) {
				return
			}
			if err != nil {
				if !strings.Contains(err.Error(), "fuzz.csv") {
					t.Fatalf("error without the file name: %v", err)
				}
				continue
			}
			// A record that was read writes back and reads again the same.
			line := appendCSV(nil, &rec)
			rd2, err := NewReader(bytes.NewReader(append([]byte(strings.Join(Columns, ",")+"\n"), line...)), "again")
			if err != nil {
				t.Fatal(err)
			}
			var again Record
			if err := rd2.Read(&again); err != nil {
				t.Fatalf("re-read %q: %v", line, err)
			}
			if appendCSV(nil, &again) == nil || string(appendCSV(nil, &again)) != string(line) {
				t.Fatalf("round trip changed %q into %q", line, appendCSV(nil, &again))
			}
		}
	})
}
