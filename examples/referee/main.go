// Command referee-client is the client that scripts run under
// `ptuprobe referee` (run.sh): openai-go with its default retries (-mode
// sdk), the same inside an application loop that calls again at once
// (-mode stacked), openai-go whose retries are an application's that add
// up to a second of jitter to the advised wait (-mode jitter), a bare
// loop of net/http that retries a 429 at once (-mode naive), or
// anthropic-sdk-go with its default retries (-mode anthropic). Each of -workers workers makes -calls calls, every call its
// own prompt, the SDKs' options read from the environment the referee
// sets (OPENAI_BASE_URL, or in the azure dialect AZURE_OPENAI_ENDPOINT's
// v1 API, and OPENAI_API_KEY; ANTHROPIC_BASE_URL and ANTHROPIC_API_KEY). With -table it prints the conformance table of the
// referee.json files it is given instead.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"math/rand/v2"
	"net/http"
	"os"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/anthropics/anthropic-sdk-go/v2"
	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"
)

func main() {
	mode := flag.String("mode", "sdk", "sdk, stacked, jitter, naive or anthropic")
	workers := flag.Int("workers", 8, "concurrent workers")
	calls := flag.Int("calls", 5, "calls per worker")
	table := flag.Bool("table", false, "print the conformance table of the arguments: CLIENT VERSION REFEREE.JSON, repeated")
	write := flag.String("write", "", "write this table file between the conformance markers of the files named as arguments")
	verify := flag.String("verify", "", "check that the files named as arguments hold this table file's verdicts between their markers")
	flag.Parse()
	if *table || *write != "" || *verify != "" {
		var err error
		switch {
		case *table:
			err = printTable(os.Stdout, flag.Args())
		case *write != "":
			err = writeTable(*write, flag.Args())
		default:
			err = verifyTable(*verify, flag.Args())
		}
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		return
	}
	modes := map[string]func(string) error{"sdk": sdkCall, "stacked": stackedCall, "jitter": jitterCall, "naive": naiveCall, "anthropic": anthropicCall}
	call, ok := modes[*mode]
	if !ok {
		fmt.Fprintf(os.Stderr, "-mode %q: want sdk, stacked, jitter, naive or anthropic\n", *mode)
		os.Exit(2)
	}
	var wg sync.WaitGroup
	var mu sync.Mutex
	failed := 0
	for w := range *workers {
		wg.Go(func() {
			for c := range *calls {
				if err := call(fmt.Sprintf("call %d-%d: say hello", w, c)); err != nil {
					mu.Lock()
					failed++
					mu.Unlock()
				}
			}
		})
	}
	wg.Wait()
	fmt.Fprintf(os.Stderr, "referee-client -mode %s: %d of %d calls failed\n", *mode, failed, *workers**calls)
}

// baseURL is where an OpenAI client of the application finds the
// service: OPENAI_BASE_URL, or, where the referee serves the azure
// dialect and leaves it unset (openai-node's AzureOpenAI would take it
// over its endpoint), Azure's v1 API under AZURE_OPENAI_ENDPOINT, the
// base URL Azure's documents give the OpenAI client.
func baseURL() string {
	if u := os.Getenv("OPENAI_BASE_URL"); u != "" {
		return u
	}
	return strings.TrimSuffix(os.Getenv("AZURE_OPENAI_ENDPOINT"), "/") + "/openai/v1"
}

// client is openai-go as an application makes it: options from the
// environment, the SDK's default 2 retries.
var client = openai.NewClient(option.WithBaseURL(baseURL()))

func sdkCall(prompt string) error {
	_, err := client.Chat.Completions.New(context.Background(), openai.ChatCompletionNewParams{
		Model:     "gpt-4o",
		MaxTokens: openai.Int(10),
		Messages:  []openai.ChatCompletionMessageParamUnion{openai.UserMessage(prompt)},
	})
	return err
}

// anthropicClient is anthropic-sdk-go as an application makes it:
// options from the environment, the SDK's default 2 retries. Made on
// first use, as NewClient reads the environment.
var anthropicClient = sync.OnceValue(func() *anthropic.Client {
	c := anthropic.NewClient()
	return &c
})

func anthropicCall(prompt string) error {
	_, err := anthropicClient().Messages.New(context.Background(), anthropic.MessageNewParams{
		Model:     "claude-sonnet-4-5",
		MaxTokens: 10,
		Messages:  []anthropic.MessageParam{anthropic.NewUserMessage(anthropic.NewTextBlock(prompt))},
	})
	return err
}

// stackedCall is an application's retry loop around the SDK: three more
// calls, at once, when the SDK gives up.
func stackedCall(prompt string) error {
	var err error
	for range 4 {
		if err = sdkCall(prompt); err == nil {
			return nil
		}
	}
	return err
}

// ownRetries is openai-go without its own retries, for jitterCall's.
var ownRetries = openai.NewClient(option.WithBaseURL(baseURL()), option.WithMaxRetries(0))

// maxAdvice is the longest advised wait openai-go sleeps: past it the
// call ends with its 429 (defaultMaxRetryAfterDelay, 2 minutes,
// internal/requestconfig/requestconfig.go line 34).
const maxAdvice = 2 * time.Minute

// jitterCall is openai-go's retries done by the application with jitter:
// up to 2 retries of a 429, each after its retry-after-ms (at most
// maxAdvice, the SDK's bound) and a draw from [0, 1 s), which the SDK does
// not add.
func jitterCall(prompt string) error {
	for n := 0; ; n++ {
		_, err := ownRetries.Chat.Completions.New(context.Background(), openai.ChatCompletionNewParams{
			Model:     "gpt-4o",
			MaxTokens: openai.Int(10),
			Messages:  []openai.ChatCompletionMessageParamUnion{openai.UserMessage(prompt)},
		})
		var refused *openai.Error
		if err == nil || n == 2 || !errors.As(err, &refused) || refused.StatusCode != http.StatusTooManyRequests {
			return err
		}
		ms, perr := strconv.Atoi(refused.Response.Header.Get("Retry-After-Ms"))
		if perr != nil || time.Duration(ms)*time.Millisecond > maxAdvice {
			return err
		}
		time.Sleep(time.Duration(ms)*time.Millisecond + rand.N(time.Second))
	}
}

// naiveCall posts with net/http and retries a 429 at once, up to 50 times.
func naiveCall(prompt string) error {
	body := fmt.Sprintf(`{"model":"gpt-4o","max_tokens":10,"messages":[{"role":"user","content":%q}]}`, prompt)
	for range 50 {
		req, _ := http.NewRequest(http.MethodPost, baseURL()+"/chat/completions", strings.NewReader(body))
		req.Header.Set("Authorization", "Bearer "+os.Getenv("OPENAI_API_KEY"))
		req.Header.Set("Content-Type", "application/json")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			return err
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusTooManyRequests {
			return nil
		}
	}
	return fmt.Errorf("still refused")
}
