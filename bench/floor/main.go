// Command floor is the least a net/http client holds per open stream, the
// floor bench/streams.sh measures ptuprobe's memory per stream against:
// at -rate for -duration it POSTs a streamed chat completion to -url
// (loopback only) from a goroutine per request, reads each answer to its
// end through a 512-byte buffer and keeps nothing of it, then prints the
// peak of requests open at once and its peak RSS (VmHWM). Its Transport
// has ptuprobe's buffer sizes (-read-buffer, -write-buffer; 0: net/http's
// 4 KiB) and pool; what ptuprobe holds beyond it is ptuprobe's own.
package main

import (
	"bytes"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

func main() {
	target := flag.String("url", "", "the chat completions URL (loopback only)")
	rate := flag.Float64("rate", 100, "requests a second")
	duration := flag.Duration("duration", 10*time.Second, "how long to send")
	key := flag.String("api-key", "sim", "the api-key header's value")
	maxTokens := flag.Int("max-tokens", 200, "max_tokens of each request")
	prompt := flag.Int("prompt-chars", 4000, "characters of each request's prompt")
	maxInFlight := flag.Int("max-in-flight", 20000, "requests open at once, at most")
	readBuf := flag.Int("read-buffer", 2<<10, "each connection's read buffer (0: net/http's default)")
	writeBuf := flag.Int("write-buffer", 1<<10, "each connection's write buffer (0: net/http's default)")
	flag.Parse()
	u, err := url.Parse(*target)
	if err != nil || (u.Hostname() != "127.0.0.1" && u.Hostname() != "::1" && u.Hostname() != "localhost") {
		fmt.Fprintln(os.Stderr, "floor: -url must be a loopback URL")
		os.Exit(2)
	}
	body := []byte(`{"messages":[{"role":"user","content":"` + strings.Repeat("x", *prompt) + `"}],"max_tokens":` +
		fmt.Sprint(*maxTokens) + `,"stream":true,"stream_options":{"include_usage":true}}`)
	client := &http.Client{Transport: &http.Transport{
		DialContext:         (&net.Dialer{Timeout: 10 * time.Second}).DialContext,
		MaxIdleConns:        *maxInFlight,
		MaxIdleConnsPerHost: *maxInFlight,
		ReadBufferSize:      *readBuf,
		WriteBufferSize:     *writeBuf,
		ForceAttemptHTTP2:   true,
	}}
	var open, peak, failed atomic.Int64
	slots := make(chan struct{}, *maxInFlight)
	var wg sync.WaitGroup
	start := time.Now()
	for i := 0; ; i++ {
		at := start.Add(time.Duration(float64(i) / *rate * float64(time.Second)))
		if at.Sub(start) >= *duration {
			break
		}
		time.Sleep(time.Until(at))
		slots <- struct{}{}
		wg.Go(func() {
			defer func() { <-slots }()
			n := open.Add(1)
			for p := peak.Load(); n > p && !peak.CompareAndSwap(p, n); p = peak.Load() {
			}
			if !stream(client, *target, *key, body) {
				failed.Add(1)
			}
			open.Add(-1)
		})
	}
	wg.Wait()
	fmt.Printf("peak_open %d failed %d peak_rss_kb %d\n", peak.Load(), failed.Load(), vmHWM())
}

// stream sends one request and reads its answer to the end.
func stream(c *http.Client, target, key string, body []byte) bool {
	req, err := http.NewRequest(http.MethodPost, target, bytes.NewReader(body))
	if err != nil {
		return false
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("api-key", key)
	resp, err := c.Do(req)
	if err != nil {
		return false
	}
	defer resp.Body.Close()
	buf := make([]byte, 512)
	for {
		if _, err := resp.Body.Read(buf); err != nil {
			return err == io.EOF && resp.StatusCode == http.StatusOK
		}
	}
}

// vmHWM is this process's peak resident set, in KB.
func vmHWM() int64 {
	b, _ := os.ReadFile("/proc/self/status")
	for _, line := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, "VmHWM:"); ok {
			var kb int64
			fmt.Sscan(strings.TrimSuffix(strings.TrimSpace(v), " kB"), &kb)
			return kb
		}
	}
	return 0
}
