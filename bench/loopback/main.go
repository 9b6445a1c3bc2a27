// Command loopback is the benchmark scripts' target: an HTTP server on
// loopback that answers every request at once, so a benchmark measures the
// client (pacing, recording), not the server. With -tls-cert and -tls-key
// it serves HTTPS (HTTP/2 and HTTP/1.1) with that certificate. With
// -stream-events N it answers each request with a server-sent event
// stream instead: N chunks -event-gap apart, then the usage and [DONE]
// (bench/streams.sh's HTTPS rounds).
package main

import (
	"flag"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"os"
	"strings"
	"time"
)

func main() {
	addr := flag.String("addr", "127.0.0.1:0", "listen address (loopback only)")
	status := flag.Int("status", 200, "status to answer")
	cert := flag.String("tls-cert", "", "PEM certificate: serve HTTPS (with -tls-key)")
	key := flag.String("tls-key", "", "PEM private key of -tls-cert")
	events := flag.Int("stream-events", 0, "answer a stream of this many chunks (0: a JSON body at once)")
	gap := flag.Duration("event-gap", 500*time.Millisecond, "time between a stream's chunks")
	flag.Parse()
	if (*cert == "") != (*key == "") {
		fmt.Fprintln(os.Stderr, "loopback: -tls-cert and -tls-key go together")
		os.Exit(2)
	}
	host, _, err := net.SplitHostPort(*addr)
	if err != nil || (host != "127.0.0.1" && host != "::1" && host != "localhost") {
		fmt.Fprintln(os.Stderr, "loopback: --addr must be a loopback address")
		os.Exit(2)
	}
	l, err := net.Listen("tcp", *addr)
	if err != nil {
		log.Fatal(err)
	}
	// The chosen address goes to stdout so a script can read it.
	fmt.Println(l.Addr().String())
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		if *events > 0 {
			stream(w, r, *events, *gap)
			return
		}
		if *status == 429 {
			w.Header().Set("retry-after-ms", "43")
			w.Header().Set("retry-after", "1")
		}
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(*status)
		io.WriteString(w, `{"usage":{"prompt_tokens":1000,"completion_tokens":50}}`)
	})
	if *cert != "" {
		err = http.ServeTLS(l, h, *cert, *key)
	} else {
		err = http.Serve(l, h)
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
