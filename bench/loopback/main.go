// Command loopback is the benchmark scripts' target: an HTTP server on
// loopback that answers every request at once, so a benchmark measures the
// client (pacing, recording), not the server. With -tls-cert and -tls-key
// it serves HTTPS (HTTP/2 and HTTP/1.1) with that certificate. With
// -stream-events N it answers each request with a server-sent event
// stream instead: N chunks -event-gap apart, then the usage and [DONE]
// (bench/streams.sh's HTTPS rounds). With -refuse-pct P it answers P% of
// requests (every one whose count falls in the first P of each hundred,
// spread evenly) with a 429 and its advice, the rest with -status: an
// overloaded deployment's mix, whose 429s the client reads advice from.
package main

import (
	"flag"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"os"
	"os/signal"
	"runtime/trace"
	"strings"
	"sync/atomic"
	"syscall"
	"time"
)

func main() {
	addr := flag.String("addr", "127.0.0.1:0", "listen address (loopback only)")
	status := flag.Int("status", 200, "status to answer")
	cert := flag.String("tls-cert", "", "PEM certificate: serve HTTPS (with -tls-key)")
	key := flag.String("tls-key", "", "PEM private key of -tls-cert")
	events := flag.Int("stream-events", 0, "answer a stream of this many chunks (0: a JSON body at once)")
	gap := flag.Duration("event-gap", 500*time.Millisecond, "time between a stream's chunks")
	refusePct := flag.Int("refuse-pct", 0, "answer this percentage of requests with a 429 (0-100)")
	traceFile := flag.String("trace", "", "write an execution trace of the server to this file until SIGTERM or SIGINT")
	flag.Parse()
	if *refusePct < 0 || *refusePct > 100 {
		fmt.Fprintln(os.Stderr, "loopback: -refuse-pct must be from 0 to 100")
		os.Exit(2)
	}
	if (*cert == "") != (*key == "") {
		fmt.Fprintln(os.Stderr, "loopback: -tls-cert and -tls-key go together")
		os.Exit(2)
	}
	host, _, err := net.SplitHostPort(*addr)
	if err != nil || (host != "127.0.0.1" && host != "::1" && host != "localhost") {
		fmt.Fprintln(os.Stderr, "loopback: --addr must be a loopback address")
		os.Exit(2)
	}
	if *traceFile != "" {
		startTrace(*traceFile)
	}
	l, err := net.Listen("tcp", *addr)
	if err != nil {
		log.Fatal(err)
	}
	// The chosen address goes to stdout so a script can read it.
	fmt.Println(l.Addr().String())
	var count, conns atomic.Int64
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		if r.URL.Path == "/conns" {
			fmt.Fprintln(w, conns.Load())
			return
		}
		if *events > 0 {
			stream(w, r, *events, *gap)
			return
		}
		code := *status
		// Request n is refused when n·P/100 steps up past an integer: P
		// of every 100, evenly spread.
		if n := count.Add(1); (n*int64(*refusePct))/100 != ((n-1)*int64(*refusePct))/100 {
			code = http.StatusTooManyRequests
		}
		w.Header().Set("Content-Type", "application/json")
		if code == 429 {
			w.Header().Set("retry-after-ms", "43")
			w.Header().Set("retry-after", "1")
			w.WriteHeader(code)
			io.WriteString(w, `{"error":{"code":"429","message":"Requests have exceeded the rate limit."}}`)
			return
		}
		w.WriteHeader(code)
		io.WriteString(w, `{"usage":{"prompt_tokens":1000,"completion_tokens":50}}`)
	})
	srv := &http.Server{Handler: h, ConnState: func(_ net.Conn, s http.ConnState) {
		if s == http.StateNew {
			conns.Add(1)
		}
	}}
	if *cert != "" {
		err = srv.ServeTLS(l, *cert, *key)
	} else {
		err = srv.Serve(l)
	}
	if err != nil && !strings.Contains(err.Error(), "closed") {
		log.Fatal(err)
	}
}

// stream answers a chat completion streamed: n chunks gap apart, each a
// delta of 16 tokens' text, then the usage and [DONE].
func stream(w http.ResponseWriter, r *http.Request, n int, gap time.Duration) {
	w.Header().Set("Content-Type", "text/event-stream")
	f, _ := w.(http.Flusher)
	for i := range n {
		select {
		case <-r.Context().Done():
			return
		case <-time.After(gap):
		}
		fmt.Fprintf(w, "data: {\"id\":\"c\",\"object\":\"chat.completion.chunk\",\"choices\":[{\"index\":0,\"delta\":{\"content\":\"lorem ipsum dolor sit amet, consectetur adipiscing elit sed do eiusmod %d \"}}],\"usage\":null}\n\n", i)
		if f != nil {
			f.Flush()
		}
	}
	fmt.Fprintf(w, "data: {\"id\":\"c\",\"object\":\"chat.completion.chunk\",\"choices\":[],\"usage\":{\"prompt_tokens\":1000,\"completion_tokens\":%d}}\n\ndata: [DONE]\n\n", 16*n)
}

// startTrace writes an execution trace to path until the server is told
// to stop: what the server did while a client saw no answers.
func startTrace(path string) {
	f, err := os.Create(path)
	if err != nil {
		log.Fatal(err)
	}
	if err := trace.Start(f); err != nil {
		log.Fatal(err)
	}
	stop := make(chan os.Signal, 1)
	signal.Notify(stop, syscall.SIGTERM, os.Interrupt)
	go func() {
		<-stop
		trace.Stop()
		f.Close()
		os.Exit(0)
	}()
}
