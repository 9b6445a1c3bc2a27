package trace

import (
	"bytes"
	"context"
	"errors"
	"os"
	"slices"
	"strings"
	"testing"
	"time"
)

func read(t *testing.T, text, format string) (*Trace, error) {
	t.Helper()
	return Read(context.Background(), strings.NewReader(text), "f", format)
}

func mustRead(t *testing.T, text, format string) *Trace {
	t.Helper()
	tr, err := read(t, text, format)
	if err != nil {
		t.Fatalf("read: %v", err)
	}
	return tr
}

// TestSamples: the three sample traces (the same 30 requests in each
// format) read alike, detected or named, and checked against their
// first rows as written.
func TestSamples(t *testing.T) {
	t.Parallel()
	files := map[string]string{FormatAzure: "azure-llm-inference.csv", FormatBurstGPT: "burstgpt.csv", FormatMooncake: "mooncake.jsonl"}
	got := map[string]*Trace{}
	for format, file := range files {
		b, err := os.ReadFile("testdata/" + file)
		if err != nil {
			t.Fatal(err)
		}
		for _, asked := range []string{FormatAuto, format} {
			tr, err := Read(context.Background(), bytes.NewReader(b), file, asked)
			if err != nil {
				t.Fatalf("%s as %s: %v", file, asked, err)
			}
			if tr.Format != format || len(tr.Rows) != 30 || tr.Clipped != 0 || tr.ZeroOutput != 0 {
				t.Fatalf("%s as %s: format %s, %d rows, %d clipped, %d zero", file, asked, tr.Format, len(tr.Rows), tr.Clipped, tr.ZeroOutput)
			}
			got[format] = tr
		}
	}
	az, bg, mc := got[FormatAzure], got[FormatBurstGPT], got[FormatMooncake]
	if r := az.Rows[0]; r.Offset != 0 || r.InputTokens != 308 || r.OutputTokens != 235 {
		t.Errorf("azure's first row: %+v", r)
	}
	// 18:15:46.1305690 − 18:15:46.0240490, to the 100 ns the file has.
	if d := az.Rows[1].Offset; d != 106520*time.Microsecond {
		t.Errorf("azure's second offset %v; want 106.52ms", d)
	}
	if r := bg.Rows[0]; r.Model != "ChatGPT" || bg.Rows[1].Offset != 107*time.Millisecond {
		t.Errorf("burstgpt: %+v, second at %v", r, bg.Rows[1].Offset)
	}
	if r := mc.Rows[2]; !slices.Equal(r.HashIDs, []int{2, 3}) || r.InputTokens != 1351 || r.Offset != 111*time.Millisecond {
		t.Errorf("mooncake's third row: %+v", r)
	}
	for i := range 30 {
		a, b, m := az.Rows[i], bg.Rows[i], mc.Rows[i]
		if a.InputTokens != b.InputTokens || a.InputTokens != m.InputTokens || a.OutputTokens != m.OutputTokens || a.OutputTokens != b.OutputTokens {
			t.Errorf("row %d sizes differ: %+v %+v %+v", i, a, b, m)
		}
		if d := a.Offset - m.Offset; d > time.Millisecond || d < -time.Millisecond {
			t.Errorf("row %d: azure at %v, mooncake at %v", i, a.Offset, m.Offset)
		}
	}
	if last := az.Rows[29].Offset; az.Span != last+last/29 {
		t.Errorf("span %v; want the last offset %v and a mean gap", az.Span, last)
	}
}

// TestMessyFiles: what real files hold reads: rows out of order, extra
// columns in any order, header case, a BOM, CRLF, blank lines, quoted
// cells, zones on the timestamps, counts written as decimals.
func TestMessyFiles(t *testing.T) {
	t.Parallel()
	azure := "\uFEFFid,GeneratedTokens,\"timestamp\",contexttokens,note\r\n" +
		"7,20,2024-05-10T00:00:02.5+00:00,300,\"a, b\"\r\n" +
		"\r\n" +
		"8,10,2024-05-10 00:00:00.0098547Z,100.0,x\r\n" +
		"9,30,2024-05-10 02:00:01+02:00,200,y\r\n"
	tr := mustRead(t, azure, FormatAuto)
	if tr.Format != FormatAzure {
		t.Fatalf("format %s", tr.Format)
	}
	var ins []int
	var ats []time.Duration
	for _, r := range tr.Rows {
		ins, ats = append(ins, r.InputTokens), append(ats, r.Offset)
	}
	if !slices.Equal(ins, []int{100, 200, 300}) || !slices.Equal(ats, []time.Duration{0, time.Second - 9854700, 2500*time.Millisecond - 9854700}) {
		t.Errorf("rows %v at %v", ins, ats)
	}
	burst := "Log Type,Response tokens,Timestamp,Total tokens,Request tokens,Model\n" +
		"Conversation log,0,12.5,40,40,GPT-4\n" + // failed: 0 tokens answered
		"API log,5,10,2000006,2000001,ChatGPT\n"
	tr = mustRead(t, burst, FormatAuto)
	if tr.Format != FormatBurstGPT || tr.ZeroOutput != 1 || tr.Clipped != 1 {
		t.Fatalf("%s: zero %d clipped %d", tr.Format, tr.ZeroOutput, tr.Clipped)
	}
	if r := tr.Rows[0]; r.InputTokens != MaxTokens || r.Model != "ChatGPT" || r.Offset != 0 {
		t.Errorf("first row %+v", r)
	}
	if r := tr.Rows[1]; r.OutputTokens != 1 || r.Offset != 2500*time.Millisecond || r.Model != "GPT-4" {
		t.Errorf("failed row %+v", r)
	}
	moon := "\n{\"hash_ids\": [1,2,3,4], \"timestamp\": 900, \"extra\": {\"a\": 1}, \"input_length\": 600, \"output_length\": 7}\r\n" +
		"{\"timestamp\": 100.5, \"input_length\": 0, \"output_length\": 3}\n"
	tr = mustRead(t, moon, FormatAuto)
	if tr.Format != FormatMooncake || len(tr.Rows) != 2 || tr.Clipped != 1 {
		t.Fatalf("%+v", tr)
	}
	// 600 tokens are two blocks: ids past them are not the prompt's.
	if r := tr.Rows[1]; !slices.Equal(r.HashIDs, []int{1, 2}) || r.Offset != 799500*time.Microsecond {
		t.Errorf("second row %+v", r)
	}
	if r := tr.Rows[0]; r.InputTokens != 1 || r.HashIDs != nil {
		t.Errorf("first row %+v", r)
	}
}

// TestRefusals: a file no format reads, and bad rows, are an *Error
// naming the file, the line and why.
func TestRefusals(t *testing.T) {
	t.Parallel()
	long := "TIMESTAMP,ContextTokens,GeneratedTokens\n2024-01-01 00:00:00," + strings.Repeat("1", MaxLine) + ",1\n"
	for _, c := range []struct {
		name, text, format string
		line               int
		why                string
	}{
		{"empty", "", FormatAuto, 0, "empty"},
		{"blank", "\n\r\n", FormatAuto, 0, "empty"},
		{"foreign csv", "source,retry_after_ms\na,12\n", FormatAuto, 0, "not a trace this reads"},
		{"header only", "TIMESTAMP,ContextTokens,GeneratedTokens\n", FormatAuto, 0, "no row"},
		{"json of another kind", `{"ts": 1, "prompt": 2}`, FormatAuto, 0, "lacks timestamp, input_length, output_length"},
		{"asked azure of burstgpt", "Timestamp,Model,Request tokens,Response tokens\n1,m,2,3\n", FormatAzure, 0, "lacks ContextTokens, GeneratedTokens"},
		{"asked azure of json", `{"timestamp": 1, "input_length": 2, "output_length": 3}`, FormatAzure, 0, "JSON lines"},
		{"asked mooncake of csv", "Timestamp,Request tokens,Response tokens\n1,2,3\n", FormatMooncake, 0, "not JSON lines"},
		{"asked ptuprobe of azure", "TIMESTAMP,ContextTokens,GeneratedTokens\n", FormatPtuprobe, 0, "not a ptuprobe results file"},
		{"unknown format", "a\n", "csv", 0, "want one of"},
		{"both headers", "TIMESTAMP,ContextTokens,GeneratedTokens,Request tokens,Response tokens\n", FormatAuto, 0, "both"},
		{"bad count", "TIMESTAMP,ContextTokens,GeneratedTokens\n2024-01-01 00:00:00,1,2\n2024-01-01 00:00:01,abc,2\n", FormatAuto, 3, `ContextTokens "abc" is not a whole number`},
		{"negative", "Timestamp,Request tokens,Response tokens\n1,2,3\n\n2,-4,3\n", FormatAuto, 4, "Request tokens \"-4\" is negative"},
		{"fraction", "Timestamp,Request tokens,Response tokens\n1,2.5,3\n", FormatAuto, 2, "not a whole number"},
		{"bad time", "TIMESTAMP,ContextTokens,GeneratedTokens\n16/11/2023 18:15,1,2\n", FormatAuto, 2, "not a date and time"},
		{"year", "TIMESTAMP,ContextTokens,GeneratedTokens\n1900-01-01 00:00:00,1,2\n", FormatAuto, 2, "out of range"},
		{"nan", "Timestamp,Request tokens,Response tokens\nNaN,2,3\n", FormatAuto, 2, "not a number"},
		{"huge time", "Timestamp,Request tokens,Response tokens\n1e300,2,3\n", FormatAuto, 2, "out of range"},
		{"short row", "Timestamp,Request tokens,Response tokens\n1,2\n", FormatAuto, 2, "2 cells, want at least 3"},
		{"unterminated quote", "Timestamp,Request tokens,Response tokens\n\"1,2,3\n", FormatAuto, 2, "unterminated"},
		{"too long a span", "Timestamp,Request tokens,Response tokens\n0,2,3\n1e9,2,3\n", FormatAuto, 0, "spans more than"},
		{"long line", long, FormatAuto, 2, "longer than"},
		{"bad json row", "{\"timestamp\": 1, \"input_length\": 2, \"output_length\": 3}\n{\"timestamp\": 2,\n", FormatAuto, 2, "not a JSON object"},
		{"missing key", "{\"timestamp\": 1, \"input_length\": 2, \"output_length\": 3}\n{\"timestamp\": 2, \"input_length\": 2}\n", FormatAuto, 2, "lacks"},
		{"string count", "{\"timestamp\": 1, \"input_length\": \"x\", \"output_length\": 3}\n", FormatAuto, 1, "not a JSON object"},
		{"negative id", "{\"timestamp\": 1, \"input_length\": 2, \"output_length\": 3, \"hash_ids\": [-1]}\n", FormatAuto, 1, "negative"},
	} {
		_, err := read(t, c.text, c.format)
		var e *Error
		if !errors.As(err, &e) {
			t.Errorf("%s: %v; want an *Error", c.name, err)
			continue
		}
		if e.File != "f" || e.Line != c.line || !strings.Contains(e.Reason, c.why) {
			t.Errorf("%s: %q (line %d); want line %d and %q", c.name, err, e.Line, c.line, c.why)
		}
		if len(err.Error()) > 400 {
			t.Errorf("%s: an error of %d bytes", c.name, len(err.Error()))
		}
	}
}

// TestTooBig: a file past MaxBytes is refused (the limit checked on a
// small budget).
func TestTooBig(t *testing.T) {
	t.Parallel()
	l := &limited{r: strings.NewReader("abcdef"), left: 3}
	b := make([]byte, 10)
	n, err := l.Read(b)
	if n != 3 || err != nil {
		t.Fatalf("%d %v", n, err)
	}
	if _, err := l.Read(b); !errors.Is(err, errTooBig) || !l.over {
		t.Fatalf("past the limit: %v", err)
	}
	l = &limited{r: strings.NewReader("abc"), left: 3}
	_, _ = l.Read(b)
	if _, err := l.Read(b); err == nil || errors.Is(err, errTooBig) {
		t.Fatalf("a file of exactly the limit: %v; want EOF", err)
	}
}

func TestCanceled(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err := Read(ctx, strings.NewReader("Timestamp,Request tokens,Response tokens\n1,2,3\n"), "f", FormatAuto)
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("%v; want canceled", err)
	}
}
