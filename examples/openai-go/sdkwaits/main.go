// Command sdkwaits checks that the official openai-go SDK and ptuprobe read
// the same advice: with the SDK's own retries on and no other retry owner,
// it records every attempt the SDK makes against a `ptuprobe serve
// --sim-dialect openai`, and compares each wait the SDK took after a 429 with
// the wait ptuprobe's reader (package retryafter) takes from that 429.
//
//	ptuprobe serve --sim-dialect openai --sim-ptu 20
//	OPENAI_API_KEY=sim go run ./sdkwaits -base http://127.0.0.1:8089
package main

import (
	"context"
	"flag"
	"fmt"
	"log"
	"math"
	"math/rand/v2"
	"net/http"
	"os"
	"sort"
	"sync"
	"time"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"
	"github.com/ptuprobe/ptuprobe/retryafter"
)

// attempt is one request the SDK sent and what came back.
type attempt struct {
	sent, answered time.Time
	status         int
	header         http.Header
}

// recorder sits under the SDK and notes every attempt of every call, by the
// call id the program puts in a header.
type recorder struct {
	mu    sync.Mutex
	next  http.RoundTripper
	calls map[string][]attempt
}

func (r *recorder) RoundTrip(req *http.Request) (*http.Response, error) {
	sent := time.Now()
	resp, err := r.next.RoundTrip(req)
	a := attempt{sent: sent, answered: time.Now()}
	if err == nil {
		a.status, a.header = resp.StatusCode, resp.Header.Clone()
	}
	r.mu.Lock()
	id := req.Header.Get("X-Call")
	r.calls[id] = append(r.calls[id], a)
	r.mu.Unlock()
	return resp, err
}

func main() {
	base := flag.String("base", "http://127.0.0.1:8089", "a running `ptuprobe serve --sim-dialect openai`")
	model := flag.String("model", "sim-ptu", "model (the simulated deployment)")
	requests := flag.Int("requests", 40, "chat completions to send")
	concurrency := flag.Int("concurrency", 8, "requests in flight at once")
	retries := flag.Int("sdk-retries", 2, "the SDK's own retries (option.WithMaxRetries)")
	tolerance := flag.Duration("tolerance", 30*time.Millisecond, "largest difference counted as agreement (scheduling on a loaded machine)")
	flag.Parse()
	rec := &recorder{next: http.DefaultTransport, calls: map[string][]attempt{}}
	client := openai.NewClient(
		option.WithBaseURL(*base+"/v1/"),
		option.WithAPIKey(os.Getenv("OPENAI_API_KEY")),
		option.WithMaxRetries(*retries),
		option.WithHTTPClient(&http.Client{Transport: rec}),
	)
	run := rand.Uint32()
	var wg sync.WaitGroup
	jobs := make(chan int)
	for range *concurrency {
		wg.Go(func() {
			for i := range jobs {
				id := fmt.Sprintf("%08x-%d", run, i)
				_, _ = client.Chat.Completions.New(context.Background(), openai.ChatCompletionNewParams{
					Model:     openai.ChatModel(*model),
					Messages:  []openai.ChatCompletionMessageParamUnion{openai.UserMessage("Run " + id + ": name a prime number.")},
					MaxTokens: openai.Int(64),
				}, option.WithHeader("X-Call", id))
			}
		})
	}
	for i := range *requests {
		jobs <- i
	}
	close(jobs)
	wg.Wait()

	// Each 429 the SDK retried: its wait against ptuprobe's reading.
	var diffs []float64
	sources := map[string]int{}
	early := 0
	for _, as := range rec.calls {
		for i := 0; i+1 < len(as); i++ {
			if as[i].status != http.StatusTooManyRequests {
				continue
			}
			advice := retryafter.FromResponse(as[i].status, as[i].header, nil, as[i].answered)
			sources[advice.Wait.Source]++
			took := float64(as[i+1].sent.Sub(as[i].answered)) / float64(time.Millisecond)
			if advice.Wait.Usable() {
				diffs = append(diffs, took-advice.Wait.MS)
				if took < advice.Wait.MS {
					early++
				}
			}
		}
	}
	if len(diffs) == 0 {
		log.Fatal("no 429 was retried with usable advice: raise -requests or lower the simulator's --sim-ptu")
	}
	sort.Float64s(diffs)
	worst := math.Max(math.Abs(diffs[0]), math.Abs(diffs[len(diffs)-1]))
	fmt.Printf("sdk waits: %d retried 429s (advice from %v); SDK wait − ptuprobe's reading: min %.1f ms, median %.1f ms, max %.1f ms; retried before the advice: %d\n",
		len(diffs), sources, diffs[0], diffs[len(diffs)/2], diffs[len(diffs)-1], early)
	if worst > float64(*tolerance)/float64(time.Millisecond) || early > 0 {
		fmt.Println("DISAGREE: the SDK did not wait what ptuprobe read")
		os.Exit(1)
	}
	fmt.Printf("agree: within %v\n", *tolerance)
}
