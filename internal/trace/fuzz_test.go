package trace

import (
	"context"
	"os"
	"strings"
	"testing"
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
