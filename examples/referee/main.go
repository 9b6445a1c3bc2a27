// Command referee-client is the client that scripts run under
// `ptuprobe referee` (run.sh): openai-go with its default retries (-mode
// sdk), the same inside an application loop that calls again at once
// (-mode stacked), or a bare loop of net/http that retries a 429 at once
// (-mode naive). Each of -workers workers makes -calls calls, every call
// its own prompt, read from OPENAI_BASE_URL and OPENAI_API_KEY as the
// referee sets them. With -table it prints the conformance table of the
// referee.json files it is given instead.
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"net/http"
	"os"
	"strings"
	"sync"

	"github.com/openai/openai-go/v3"
)

func main() {
	mode := flag.String("mode", "sdk", "sdk, stacked or naive")
	workers := flag.Int("workers", 8, "concurrent workers")
	calls := flag.Int("calls", 5, "calls per worker")
	table := flag.Bool("table", false, "print the conformance table of the referee.json files named as arguments")
	flag.Parse()
	if *table {
		if err := printTable(flag.Args()); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		return
	}
	call, ok := map[string]func(string) error{"sdk": sdkCall, "stacked": stackedCall, "naive": naiveCall}[*mode]
	if !ok {
		fmt.Fprintf(os.Stderr, "-mode %q: want sdk, stacked or naive\n", *mode)
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

// client is openai-go as an application makes it: options from the
// environment, the SDK's default 2 retries.
var client = openai.NewClient()

func sdkCall(prompt string) error {
	_, err := client.Chat.Completions.New(context.Background(), openai.ChatCompletionNewParams{
		Model:     "gpt-4o",
		MaxTokens: openai.Int(10),
		Messages:  []openai.ChatCompletionMessageParamUnion{openai.UserMessage(prompt)},
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

// naiveCall posts with net/http and retries a 429 at once, up to 50 times.
func naiveCall(prompt string) error {
	body := fmt.Sprintf(`{"model":"gpt-4o","max_tokens":10,"messages":[{"role":"user","content":%q}]}`, prompt)
	for range 50 {
		req, _ := http.NewRequest(http.MethodPost, os.Getenv("OPENAI_BASE_URL")+"/chat/completions", strings.NewReader(body))
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

// printTable prints one row per referee.json: the client (the file's
// directory name, CLIENT--SCENARIO--DIALECT), the scenario, the dialect,
// the verdict and every check.
func printTable(files []string) error {
	head := false
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			return err
		}
		var v struct {
			Scenario, Dialect string
			Pass              bool
			Checks            []struct {
				Name   string
				Value  float64
				Expect string
				Pass   bool
			}
		}
		if err := json.Unmarshal(b, &v); err != nil {
			return fmt.Errorf("%s: %w", f, err)
		}
		if !head {
			fmt.Print("| client | dialect | scenario | verdict |")
			for _, c := range v.Checks {
				fmt.Printf(" %s |", c.Name)
			}
			fmt.Print("\n|---|---|---|---|" + strings.Repeat("---|", len(v.Checks)) + "\n")
			head = true
		}
		name, _, _ := strings.Cut(lastDir(f), "--")
		verdict := "PASS"
		if !v.Pass {
			verdict = "FAIL"
		}
		fmt.Printf("| %s | %s | %s | %s |", name, v.Dialect, v.Scenario, verdict)
		for _, c := range v.Checks {
			mark := ""
			if !c.Pass {
				mark = " ✗"
			}
			fmt.Printf(" %g%s |", c.Value, mark)
		}
		fmt.Println()
	}
	return nil
}

func lastDir(path string) string {
	parts := strings.Split(strings.TrimSuffix(path, "/referee.json"), "/")
	return parts[len(parts)-1]
}
