package client

import (
	"context"
	"net/http"
	"net/http/httptest"
	"os"
	"runtime"
	"runtime/pprof"
	"sync"
	"testing"
	"time"

	"github.com/ptuprobe/ptuprobe/results"
)

// BenchmarkOpenStreamHeap reports the live heap an open HTTP/1.1 stream
// holds on the client's side (bytes/stream): b.N streams are opened
// against a loopback server that sends each a first event and holds it;
// the live heap after a collection, less the one before, over b.N. The
// server's share is measured with them and taken out (its handlers'
// heap, from a run of the server alone is not separable, so the figure
// is the client's and the server's goroutines' heap together: compare it
// between builds, not with bench/floor). bench/README.md: memory per open
// stream.
func BenchmarkOpenStreamHeap(b *testing.B) {
	first := streamOfTokens(1)
	release := make(chan struct{})
	var opened sync.WaitGroup
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		w.WriteHeader(200)
		w.Write(first[:len(first)/2])
		w.(http.Flusher).Flush()
		opened.Done()
		<-release
		w.Write(first[len(first)/2:])
	}))
	defer srv.Close()
	tg, err := New(Config{API: APIAzure, Endpoint: srv.URL, Deployment: "d", Stream: true, PromptTokens: 1000, MaxTokens: 200, MaxConns: 20000})
	if err != nil {
		b.Fatal(err)
	}
	defer tg.Close()
	n := b.N
	var ms runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&ms)
	before := ms.HeapAlloc
	opened.Add(n)
	var done sync.WaitGroup
	done.Add(n)
	ctx := context.Background()
	start := time.Now()
	row := results.Blank() // the run's, shared as dispatch shares its
	row.Attempt = 1
	b.ResetTimer()
	for i := range n {
		go func() {
			defer done.Done()
			tg.SendHead(ctx, &Head{Row: &row, Seq: i, Wave: results.None}, start, ctx, func(*results.Record) {})
		}()
	}
	opened.Wait()
	time.Sleep(100 * time.Millisecond) // the client's side past the first event's read
	runtime.GC()
	runtime.ReadMemStats(&ms)
	b.StopTimer()
	if path := os.Getenv("OPEN_STREAM_HEAP_PROFILE"); path != "" {
		writeHeapProfile(b, path)
	}
	b.ReportMetric(float64(int64(ms.HeapAlloc)-int64(before))/float64(n), "heap-bytes/stream")
	close(release)
	done.Wait()
}

// writeHeapProfile writes the live heap, as of the last collection, to
// path: with OPEN_STREAM_HEAP_PROFILE=path and -test.memprofilerate=1,
// BenchmarkOpenStreamHeap's streams while they are open, every
// allocation sampled (bench/README.md, memory per open stream).
func writeHeapProfile(b *testing.B, path string) {
	f, err := os.Create(path)
	if err != nil {
		b.Fatal(err)
	}
	defer f.Close()
	if err := pprof.Lookup("heap").WriteTo(f, 0); err != nil {
		b.Fatal(err)
	}
}
