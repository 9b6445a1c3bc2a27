package trace

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"os"
	"slices"
	"strconv"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/ptuprobe/ptuprobe/internal/jsonscan"
)

// fuzzFormat reads any input as format: never a panic; a trace read is
// sorted, from zero, sized within the bounds.
func fuzzFormat(f *testing.F, format string, seeds ...string) {
	for _, s := range seeds {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		tr, err := Read(context.Background(), strings.NewReader(s), "f", format)
		if err != nil {
			if _, ok := err.(*Error); !ok {
				t.Fatalf("%T %v: want an *Error", err, err)
			}
			return
		}
		if len(tr.Rows) == 0 || tr.Rows[0].Offset != 0 || tr.Span <= tr.Rows[len(tr.Rows)-1].Offset {
			t.Fatalf("rows from %v, span %v", tr.Rows[0].Offset, tr.Span)
		}
		for i, r := range tr.Rows {
			if i > 0 && r.Offset < tr.Rows[i-1].Offset || r.Offset > MaxSpan {
				t.Fatalf("row %d at %v", i, r.Offset)
			}
			if r.InputTokens < 1 || r.InputTokens > MaxTokens || r.OutputTokens < 1 || r.OutputTokens > MaxTokens {
				t.Fatalf("row %d sized %d, %d", i, r.InputTokens, r.OutputTokens)
			}
			if len(r.HashIDs) > (r.InputTokens+BlockTokens-1)/BlockTokens {
				t.Fatalf("row %d: %d blocks for %d tokens", i, len(r.HashIDs), r.InputTokens)
			}
		}
	})
}

func sample(f *testing.F, name string) string {
	b, err := os.ReadFile("testdata/" + name)
	if err != nil {
		f.Fatal(err)
	}
	return string(b)
}

func FuzzAzure(f *testing.F) {
	fuzzFormat(f, FormatAzure, sample(f, "azure-llm-inference.csv"),
		"\uFEFFTIMESTAMP,ContextTokens,GeneratedTokens\r\n2024-05-10T00:00:00.0098547+00:00,1,0\r\n")
}

func FuzzBurstGPT(f *testing.F) {
	fuzzFormat(f, FormatBurstGPT, sample(f, "burstgpt.csv"), "Response tokens,Timestamp,Request tokens\n0,1e3,\"5\"\n")
}

func FuzzMooncake(f *testing.F) {
	fuzzFormat(f, FormatMooncake, sample(f, "mooncake.jsonl"), `{"timestamp": 1.5, "input_length": 2000, "output_length": 0, "hash_ids": [1, 2, 3, 4, 5]}`)
}

func FuzzPtuprobe(f *testing.F) {
	fuzzFormat(f, FormatPtuprobe, "run_id,shape,group,seq,attempt,wave,intended_ms,sent_ms,ttfb_ms,latency_ms,status,error,retry_after_ms,retry_after,wait_ms,wait_source,spillover,prompt_tokens,max_tokens,prompt_tokens_sent\nr,burst,g,0,1,0,0,0,1,2,200,,,,,none,0,5,6,7\nr,burst,g,1,1,0,3.5,0,1,2,429,,,,,none,0,,6,\n")
}

func FuzzAuto(f *testing.F) {
	fuzzFormat(f, FormatAuto, sample(f, "burstgpt.csv"), sample(f, "mooncake.jsonl"), "a,b\n1,2\n", "{}\n")
}

// mooncakeByJSON is mooncakeLine by encoding/json: the reference the
// fast reader is fuzzed against (keys matched exactly, the last of a
// repeated key kept, numbers as their text).
func mooncakeByJSON(line []byte) (at, in, out int64, ids []int, err error) {
	var m map[string]json.RawMessage
	if err := json.Unmarshal(line, &m); err != nil {
		return 0, 0, 0, nil, err
	}
	num := func(k string) (string, bool) {
		raw, ok := m[k]
		if !ok || len(raw) == 0 || raw[0] != '-' && (raw[0] < '0' || raw[0] > '9') {
			return "", false
		}
		return string(raw), true
	}
	ts, ok1 := num("timestamp")
	il, ok2 := num("input_length")
	ol, ok3 := num("output_length")
	if !ok1 || !ok2 || !ok3 {
		return 0, 0, 0, nil, errors.New("lacks a number")
	}
	if raw, ok := m["hash_ids"]; ok && string(raw) != "null" {
		var elems []json.RawMessage
		if err := json.Unmarshal(raw, &elems); err != nil {
			return 0, 0, 0, nil, err
		}
		for _, e := range elems {
			v, err := strconv.ParseInt(string(e), 10, 64)
			if err != nil || v < 0 {
				return 0, 0, 0, nil, errors.New("bad id")
			}
			ids = append(ids, int(min(v, jsonscan.Huge)))
		}
	}
	if at, err = seconds(ts, "timestamp", 1e-3); err != nil {
		return 0, 0, 0, nil, err
	}
	if in, err = count(il, "input_length"); err != nil {
		return 0, 0, 0, nil, err
	}
	out, err = count(ol, "output_length")
	return at, in, out, ids, err
}

// FuzzMooncakeLine: the fast reader of a Mooncake row agrees with
// encoding/json's reading of it (texts both read alike: valid UTF-8, no
// escapes, not nested past jsonscan.MaxDepth).
func FuzzMooncakeLine(f *testing.F) {
	for _, s := range []string{
		`{"timestamp": 24, "input_length": 308, "output_length": 235, "hash_ids": [0]}`,
		`{"timestamp": 1.5e3, "input_length": 2000, "output_length": 0, "hash_ids": null, "x": [{"a": "b"}]}`,
		`{"timestamp": 1, "input_length": 2, "output_length": 3, "timestamp": 9}`,
		`{"timestamp": "1", "input_length": 2, "output_length": 3}`,
		`{"timestamp": 1, "input_length": 2, "output_length": 3, "hash_ids": [1.0]}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, line []byte) {
		if !utf8.Valid(line) || bytes.IndexByte(line, '\\') >= 0 || bytes.Count(line, []byte("["))+bytes.Count(line, []byte("{")) > jsonscan.MaxDepth {
			return
		}
		var b builder
		_, err := mooncakeLine(line, &b, nil)
		at, in, out, ids, refErr := mooncakeByJSON(line)
		if (err == nil) != (refErr == nil) {
			t.Fatalf("%q: jsonscan says %v, encoding/json %v", line, err, refErr)
		}
		if err != nil {
			return
		}
		r := b.rows[0]
		var want builder
		if err := want.add(at, in, out, ids, ""); err != nil {
			t.Fatal(err)
		}
		w := want.rows[0]
		if b.at[0] != want.at[0] || r.InputTokens != w.InputTokens || r.OutputTokens != w.OutputTokens || !slices.Equal(b.ids, want.ids) {
			t.Fatalf("%q: read %+v at %d ids %v; encoding/json %+v at %d ids %v", line, r, b.at[0], b.ids, w, want.at[0], want.ids)
		}
	})
}
