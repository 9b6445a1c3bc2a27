// Command loopback is the benchmark scripts' target: an HTTP server on
// loopback that answers every request at once, so a benchmark measures the
// client (pacing, recording), not the server. With -tls-cert and -tls-key
// it serves HTTPS (HTTP/2 and HTTP/1.1) with that certificate.
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
)

func main() {
	addr := flag.String("addr", "127.0.0.1:0", "listen address (loopback only)")
	status := flag.Int("status", 200, "status to answer")
	cert := flag.String("tls-cert", "", "PEM certificate: serve HTTPS (with -tls-key)")
	key := flag.String("tls-key", "", "PEM private key of -tls-cert")
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
