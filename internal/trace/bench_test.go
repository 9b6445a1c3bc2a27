package trace

import (
	"context"
	"fmt"
	"strings"
	"testing"
)

// benchRows is the rows of a benchmark's trace.
const benchRows = 100_000

func benchTrace(format string) string {
	var b strings.Builder
	switch format {
	case FormatBurstGPT:
		b.WriteString("Timestamp,Model,Request tokens,Response tokens,Total tokens,Log Type\n")
		for i := range benchRows {
			fmt.Fprintf(&b, "%d.%03d,ChatGPT,%d,%d,%d,Conversation log\n", i/7, i%1000, 100+i%900, 5+i%300, 105+i%900+i%300)
		}
	case FormatAzure:
		b.WriteString("TIMESTAMP,ContextTokens,GeneratedTokens\n")
		for i := range benchRows {
			fmt.Fprintf(&b, "2023-11-16 18:%02d:%02d.%07d,%d,%d\n", i/36000%60, i/600%60, i%10_000_000, 100+i%900, 5+i%300)
		}
	case FormatMooncake:
		for i := range benchRows {
			fmt.Fprintf(&b, `{"timestamp": %d, "input_length": %d, "output_length": %d, "hash_ids": [%d, %d, %d]}`+"\n", i*3, 1100+i%400, 5+i%300, i, i+1, i+2)
		}
	}
	return b.String()
}

// BenchmarkRead reads a trace of 100,000 rows in each public format.
func BenchmarkRead(b *testing.B) {
	for _, format := range []string{FormatAzure, FormatBurstGPT, FormatMooncake} {
		text := benchTrace(format)
		b.Run(format, func(b *testing.B) {
			b.SetBytes(int64(len(text)))
			b.ReportAllocs()
			for b.Loop() {
				tr, err := Read(context.Background(), strings.NewReader(text), "bench", FormatAuto)
				if err != nil || len(tr.Rows) != benchRows {
					b.Fatalf("%v", err)
				}
			}
		})
	}
}
