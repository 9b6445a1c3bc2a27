// Command openai-go sends chat completions through the official openai-go
// SDK in Azure mode, with the SDK's own retries off and ptuprobe's admission
// Transport under it as the one retry owner, then asks the simulator
// (ptuprobe serve) whether every retry waited what its 429 advised.
//
//	ptuprobe serve --sim-ptu 20
//	AZURE_OPENAI_API_KEY=sim go run . -endpoint http://127.0.0.1:8089
package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"log"
	"math/rand/v2"
	"net"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"os/signal"
	"sync"
	"sync/atomic"
	"time"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/azure"
	"github.com/openai/openai-go/v3/option"
	"github.com/ptuprobe/ptuprobe/admission"
)

// keyEnv names the environment variable that holds the API key.
const keyEnv = "AZURE_OPENAI_API_KEY"

func main() {
	endpoint := flag.String("endpoint", "http://127.0.0.1:8089", "Azure OpenAI endpoint, or a running `ptuprobe serve`")
	deployment := flag.String("deployment", "sim-ptu", "deployment name")
	apiVersion := flag.String("api-version", "2024-10-21", "Azure OpenAI API version")
	concurrency := flag.Int("concurrency", 8, "requests in flight at once")
	requests := flag.Int("requests", 48, "chat completions to send")
	maxAttempts := flag.Int("max-attempts", 6, "attempts per request, the first included (admission.Policy.MaxAttempts)")
	budget := flag.Duration("budget", 30*time.Second, "latency budget per request (admission.Policy.Budget; 0: none)")
	stats := flag.Bool("stats", true, "check the simulator's witness counts (GET /sim/stats) before and after; false for a real endpoint")
	flag.Parse()
	log.SetFlags(log.Lmicroseconds)
	key := os.Getenv(keyEnv)
	if key == "" || *concurrency < 1 || *requests < 1 {
		fmt.Fprintf(os.Stderr, "set %s (any value for the simulator); -concurrency and -requests must be positive\n", keyEnv)
		os.Exit(2)
	}
	base, err := url.Parse(*endpoint)
	if err != nil {
		log.Fatalf("-endpoint: %v", err)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	var before simStats
	if *stats {
		if before, err = fetchStats(base); err != nil {
			log.Fatal(err)
		}
	}

	// openai-go's Azure mode sends a key over HTTPS only; its escape hatch for
	// plain-HTTP loopback (azure.WithUnsafeAllowHTTP) sends through a direct
	// connection of its own and bypasses a custom RoundTripper. So the
	// simulator, which speaks HTTP on loopback, is reached through an
	// in-process TLS front, and the admission Transport stays in the path.
	next, sdkEndpoint := http.DefaultTransport, *endpoint
	if base.Scheme == "http" && isLoopback(base.Hostname()) {
		front := httptest.NewTLSServer(httputil.NewSingleHostReverseProxy(base))
		defer front.Close()
		next, sdkEndpoint = front.Client().Transport, front.URL
	}

	var attempts, retries atomic.Int64
	p := admission.DefaultPolicy() // honour the advised wait, with jitter
	p.MaxAttempts, p.Budget = *maxAttempts, *budget
	p.Observe = func(d admission.Decision) { // safe to log: no URL, key or body
		attempts.Add(1)
		if d.Attempt > 1 && d.Status != 0 {
			retries.Add(1)
		}
		log.Printf("attempt %d, status %d: %s", d.Attempt, d.Status, d.Reason)
	}
	owner, err := admission.New(next, p)
	if err != nil {
		log.Fatal(err)
	}
	client := openai.NewClient(
		azure.WithEndpoint(sdkEndpoint, *apiVersion),
		azure.WithAPIKey(key),
		option.WithMaxRetries(0), // the admission Transport is the one retry owner
		option.WithHTTPClient(&http.Client{Transport: owner}),
	)

	// Prompts are unique per request and per run: the simulator tells a
	// retry from a new request by its key and body.
	run := rand.Uint32()
	var succeeded, gaveUp, failed atomic.Int64
	var wg sync.WaitGroup
	jobs := make(chan int)
	for range *concurrency {
		wg.Go(func() {
			for i := range jobs {
				_, err := client.Chat.Completions.New(ctx, openai.ChatCompletionNewParams{
					Model:     openai.ChatModel(*deployment),
					Messages:  []openai.ChatCompletionMessageParamUnion{openai.UserMessage(fmt.Sprintf("Run %08x, request %d: name a prime number.", run, i))},
					MaxTokens: openai.Int(64),
				})
				var giveUp *admission.GiveUpError
				switch {
				case err == nil:
					succeeded.Add(1)
				case errors.As(err, &giveUp):
					gaveUp.Add(1)
					log.Printf("request %d gave up after %d attempts, last advised wait %v", i, giveUp.Attempts, giveUp.LastWait)
				default:
					failed.Add(1)
					var ue *url.Error // its URL names the host: log the cause only
					if errors.As(err, &ue) {
						err = ue.Err
					}
					log.Printf("request %d failed: %v", i, err)
				}
			}
		})
	}
	start := time.Now()
send:
	for i := range *requests {
		select {
		case jobs <- i:
		case <-ctx.Done():
			break send
		}
	}
	close(jobs)
	wg.Wait()

	fmt.Printf("requests %d, succeeded %d, gave up %d, failed %d, attempts %d (retries %d), in %v\n",
		*requests, succeeded.Load(), gaveUp.Load(), failed.Load(), attempts.Load(), retries.Load(), time.Since(start).Round(time.Millisecond))
	ok := failed.Load() == 0 && succeeded.Load()+gaveUp.Load() == int64(*requests)
	if *stats {
		after, err := fetchStats(base)
		if err != nil {
			log.Fatal(err)
		}
		ok = witness(after.minus(before), retries.Load()) && ok
	}
	if !ok {
		os.Exit(1)
	}
}

// simStats are the fields of the simulator's GET /sim/stats used here.
type simStats struct {
	Requests      int64 `json:"requests"`
	Admitted      int64 `json:"admitted"`
	Refused       int64 `json:"refused"`
	EarlyReturns  int64 `json:"early_returns"`
	RetriesOnTime int64 `json:"retries_on_time"`
	SDKRetries    int64 `json:"sdk_retries"`
}

func (a simStats) minus(b simStats) simStats {
	return simStats{a.Requests - b.Requests, a.Admitted - b.Admitted, a.Refused - b.Refused,
		a.EarlyReturns - b.EarlyReturns, a.RetriesOnTime - b.RetriesOnTime, a.SDKRetries - b.SDKRetries}
}

func fetchStats(base *url.URL) (simStats, error) {
	var st simStats
	res, err := http.Get(base.JoinPath("/sim/stats").String())
	if err != nil {
		return st, fmt.Errorf("GET /sim/stats: %w (-stats=false for an endpoint that is no simulator)", err)
	}
	defer res.Body.Close()
	if res.StatusCode != http.StatusOK {
		return st, fmt.Errorf("GET /sim/stats: %s (-stats=false for an endpoint that is no simulator)", res.Status)
	}
	if err := json.NewDecoder(res.Body).Decode(&st); err != nil {
		return st, fmt.Errorf("GET /sim/stats: %w", err)
	}
	return st, nil
}

// witness prints what the simulator saw during the run and reports whether
// it shows one retry owner that honoured every advised wait. The SDK marks
// its one attempt X-Stainless-Retry-Count: 0 and the admission Transport
// sends that header as it is on its own retries, so every declared SDK
// retry the simulator counts is the SDK's own: there must be none.
func witness(st simStats, ownRetries int64) bool {
	fmt.Printf("simulator: requests %d, admitted %d, refused %d\n", st.Requests, st.Admitted, st.Refused)
	fmt.Printf("witness: early_returns=%d retries_on_time=%d sdk_retries=%d (the admission Transport retried %d times)\n",
		st.EarlyReturns, st.RetriesOnTime, st.SDKRetries, ownRetries)
	if st.EarlyReturns > 0 || st.SDKRetries > 0 {
		fmt.Println("FAIL: a retry came back before its advised wait, or the SDK retried too")
		return false
	}
	return true
}

func isLoopback(host string) bool {
	ip := net.ParseIP(host)
	return host == "localhost" || ip != nil && ip.IsLoopback()
}
