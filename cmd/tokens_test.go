package cmd

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ptuprobe/ptuprobe/internal/testkit"
	"github.com/ptuprobe/ptuprobe/internal/tokenize"
	"github.com/ptuprobe/ptuprobe/internal/trace"
)

// arrival is one request as a counting server saw it.
type arrival struct {
	at        time.Time
	tokens    int // its messages' text under o200k_base
	maxTokens int
	messages  json.RawMessage
}

// countingServer is a chat-completions target that counts each prompt's
// text with o200k_base (as the measures do: the messages' text,
// not the chat format) and answers with the usage a real one would (the
// text and 7 tokens of format for one message).
func countingServer(t *testing.T) (*httptest.Server, func() []arrival) {
	t.Helper()
	tok, err := tokenize.Get(tokenize.O200kBase)
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	var seen []arrival
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		at := time.Now()
		var b struct {
			Messages  json.RawMessage `json:"messages"`
			MaxTokens int             `json:"max_tokens"`
		}
		body, _ := io.ReadAll(r.Body)
		if json.Unmarshal(body, &b) != nil {
			w.WriteHeader(400)
			return
		}
		var msgs []struct{ Content string }
		json.Unmarshal(b.Messages, &msgs)
		n := 0
		for _, m := range msgs {
			n += tok.CountString(m.Content)
		}
		mu.Lock()
		seen = append(seen, arrival{at: at, tokens: n, maxTokens: b.MaxTokens, messages: b.Messages})
		mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, `{"usage":{"prompt_tokens":`+itoa(n+4*len(msgs)+3)+`,"completion_tokens":1}}`)
	}))
	t.Cleanup(srv.Close)
	return srv, func() []arrival {
		mu.Lock()
		defer mu.Unlock()
		return slices.Clone(seen)
	}
}

func itoa(n int) string { return strconv.Itoa(n) }

// The measure: --prompt-tokens lognormal:800,0.5 over 300
// requests arrives with a median of 800 ± 10% under the server's count,
// --max-tokens uniform:50-150 spans its range, and prompt_tokens_sent is
// the server's count and the constant chat overhead (7), every row.
func TestDrawnSizesArriveAsCounted(t *testing.T) {
	t.Parallel()
	srv, seen := countingServer(t)
	out := filepath.Join(t.TempDir(), "results.csv")
	code, _, stderr := runCLI(context.Background(), "schedule", "--url", srv.URL+"/v1/chat/completions", "--rate", "1200/s", "--duration", "250ms",
		"--prompt-tokens", "lognormal:800,0.5", "--max-tokens", "uniform:50-150", "--seed", "7", "-o", out, "--quiet")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	got := seen()
	if len(got) != 300 {
		t.Fatalf("%d requests arrived, want 300", len(got))
	}
	var counts, caps []int
	for _, a := range got {
		counts, caps = append(counts, a.tokens), append(caps, a.maxTokens)
	}
	slices.Sort(counts)
	if med := float64(counts[150]); math.Abs(med/800-1) > 0.10 {
		t.Errorf("median prompt %v tokens under o200k_base, want 800 ± 10%%", med)
	}
	if slices.Min(caps) < 50 || slices.Max(caps) > 150 || slices.Min(caps) > 53 || slices.Max(caps) < 147 {
		t.Errorf("max_tokens from %d to %d, want uniform:50-150 to span its range", slices.Min(caps), slices.Max(caps))
	}
	recs := testkit.ReadRecords(t, out)
	byCount := map[int]int{}
	for _, a := range got {
		byCount[a.tokens]++
	}
	for _, r := range recs {
		if r.PromptTokensSent != r.PromptTokens || byCount[r.PromptTokensSent-7] == 0 || r.MaxTokens < 50 || r.MaxTokens > 150 {
			t.Fatalf("seq %d: prompt_tokens_sent %d, the server's usage %d, max_tokens %d: want the server's count + 7", r.Seq, r.PromptTokensSent, r.PromptTokens, r.MaxTokens)
		}
	}
}

// Every row of the three sample traces reaches the target, its prompt
// its row's size exactly (the measure: within 3%), its max_tokens the
// output length (× --max-tokens-factor), in the trace's order. (The
// timing, within 15 ms of the trace's clock, is bench/replay.sh's: a
// unit test does not wait on a wall clock; here the trace runs 50 times
// faster.)
func TestReplayedTracesArriveAsWritten(t *testing.T) {
	t.Parallel()
	dir := "../internal/trace/testdata"
	if _, err := os.Stat("/work/shared/fixtures/traces/mooncake.jsonl"); err == nil {
		dir = "/work/shared/fixtures/traces"
	}
	for _, name := range []string{"azure-llm-inference.csv", "burstgpt.csv", "mooncake.jsonl"} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			path := filepath.Join(dir, name)
			f, _ := os.Open(path)
			tr, err := trace.Read(context.Background(), f, path, trace.FormatAuto)
			f.Close()
			if err != nil {
				t.Fatal(err)
			}
			srv, seen := countingServer(t)
			out := filepath.Join(t.TempDir(), "results.csv")
			code, _, stderr := runCLI(context.Background(), "schedule", "--url", srv.URL+"/v1/chat/completions", "--replay", path,
				"--replay-time-scale", "0.02", "--max-tokens-factor", "2", "-o", out, "--quiet")
			if code != 0 {
				t.Fatalf("exit %d: %s", code, stderr)
			}
			got := seen()
			if len(got) != len(tr.Rows) {
				t.Fatalf("%d of the trace's %d rows arrived", len(got), len(tr.Rows))
			}
			recs := testkit.ReadRecords(t, out)
			for _, r := range recs {
				row := tr.Rows[r.Seq]
				if r.PromptTokensSent != row.InputTokens+7 || r.MaxTokens != 2*row.OutputTokens {
					t.Errorf("row %d: sent %d tokens, max_tokens %d; want %d + 7 and %d", r.Seq, r.PromptTokensSent, r.MaxTokens, row.InputTokens, 2*row.OutputTokens)
				}
				if want := float64(row.Offset) * 0.02 / float64(time.Millisecond); math.Abs(r.IntendedMS-want) > 0.01 {
					t.Errorf("row %d intended at %.3f ms, want %.3f", r.Seq, r.IntendedMS, want)
				}
			}
			want := map[[2]int]int{}
			for _, row := range tr.Rows {
				want[[2]int{row.InputTokens, 2 * row.OutputTokens}]++
			}
			for _, a := range got {
				want[[2]int{a.tokens, a.maxTokens}]--
			}
			for k, v := range want {
				if v != 0 {
					t.Errorf("%d prompts of %d tokens with max_tokens %d missing or extra under o200k_base", v, k[0], k[1])
				}
			}
		})
	}
}

// --prompts: the file's messages arrive as given, and no byte of their
// text is in any output: the results, stdout, stderr, the report.
func TestPromptsArriveAndNeverLeak(t *testing.T) {
	t.Parallel()
	const marker = "qzmarkerqz"
	lines := []string{
		`{"messages":[{"role":"system","content":"you are terse ` + marker + `"},{"role":"user","content":"hello ` + marker + `"}]}`,
		`{"prompt":"a story about ` + marker + `","max_tokens":33}`,
		`{"messages":[{"role":"user","content":"what is ` + marker + `?"}],"max_tokens":12}`,
	}
	dir := t.TempDir()
	prompts := filepath.Join(dir, "prompts.jsonl")
	os.WriteFile(prompts, []byte(strings.Join(lines, "\n")+"\n"), 0o644)
	srv, seen := countingServer(t)
	out := filepath.Join(dir, "results.csv")
	code, stdout, stderr := runCLI(context.Background(), "schedule", "--url", srv.URL+"/v1/chat/completions", "--rate", "60/s", "--duration", "100ms",
		"--prompts", prompts, "-o", out)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	got := seen()
	if len(got) != 6 {
		t.Fatalf("%d requests, want 6", len(got))
	}
	slices.SortFunc(got, func(a, b arrival) int { return a.at.Compare(b.at) })
	var first struct{ Messages json.RawMessage }
	json.Unmarshal([]byte(lines[0]), &first)
	seenFirst := 0
	for _, a := range got {
		if string(a.messages) == string(first.Messages) {
			seenFirst++
		}
	}
	if seenFirst != 2 {
		t.Errorf("line 1's messages arrived as given %d times, want 2 (in order, cycled)", seenFirst)
	}
	report := filepath.Join(dir, "report")
	acode, astdout, astderr := runCLI(context.Background(), "analyze", "--out-dir", report, out)
	if acode != 0 {
		t.Fatalf("analyze exit %d: %s", acode, astderr)
	}
	dry, dstdout, dstderr := runCLI(context.Background(), "schedule", "--url", srv.URL, "--rate", "1", "--prompts", prompts, "--dry-run")
	if dry != 0 {
		t.Fatalf("dry run exit %d: %s", dry, dstderr)
	}
	bad := filepath.Join(dir, "bad.jsonl")
	os.WriteFile(bad, []byte(lines[0]+"\n"+`{"prompt":"`+marker+`"`+"\n"), 0o644)
	bcode, bstdout, bstderr := runCLI(context.Background(), "schedule", "--url", srv.URL, "--rate", "1", "--prompts", bad)
	if bcode != ExitUsage || !strings.Contains(bstderr, "line 2") {
		t.Errorf("a bad line: exit %d, %q", bcode, bstderr)
	}
	outputs := map[string]string{"stdout": stdout + astdout + dstdout + bstdout, "stderr": stderr + astderr + dstderr + bstderr}
	outputs["results.csv"] = readFile(t, out)
	files := testkit.DirFiles(t, report)
	if len(files) < 4 {
		t.Fatalf("the report holds %d files", len(files))
	}
	for name, text := range files {
		outputs[name] = text
	}
	for name, text := range outputs {
		if strings.Contains(text, marker) || strings.Contains(text, "terse") {
			t.Errorf("%s holds prompt text", name)
		}
	}
}

// Every new form is bounded as N is: past the bound, one line, exit 2.
func TestTokenFlagsRefused(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	counts := filepath.Join(dir, "counts.txt")
	os.WriteFile(counts, []byte("100\n2000000\n"), 0o644)
	for _, args := range [][]string{
		{"schedule", "--rate", "1", "--prompt-tokens", "uniform:0-10"},
		{"schedule", "--rate", "1", "--prompt-tokens", "lognormal:800,9"},
		{"schedule", "--rate", "1", "--max-tokens", "normal:2000000,1"},
		{"schedule", "--rate", "1", "--prompt-tokens", "file:" + counts},
		{"schedule", "--rate", "1", "--prompt-tokens", "file:" + filepath.Join(dir, "missing")},
		{"schedule", "--rate", "1", "--tokenizer", "p50k_base"},
		{"schedule", "--rate", "1", "--prompts-order", "random"},
		{"schedule", "--rate", "1", "--prompts", filepath.Join(dir, "missing.jsonl")},
		{"schedule", "--replay", counts},
		{"schedule", "--replay", "../internal/trace/testdata/mooncake.jsonl", "--rate", "1"},
		{"schedule", "--replay", "../internal/trace/testdata/mooncake.jsonl", "--arrival", "poisson"},
		{"schedule", "--replay", "../internal/trace/testdata/mooncake.jsonl", "--max-tokens-factor", "0"},
		{"schedule", "--replay", "../internal/trace/testdata/mooncake.jsonl", "--replay-time-scale", "0"},
		{"schedule", "--replay", "../internal/trace/testdata/mooncake.jsonl", "--replay-window", "9h-10h"},
		{"schedule", "--replay", "../internal/trace/testdata/mooncake.jsonl", "--replay-format", "nope"},
		{"schedule", "--replay", "../internal/trace/testdata/mooncake.jsonl", "--prompts", counts},
		{"policies", "--prompt-tokens", "uniform:1-5"},
	} {
		code, stdout, stderr := runCLI(context.Background(), append(args, "--quiet", "--dry-run")...)
		if code != ExitUsage || strings.Count(strings.TrimRight(stderr, "\n"), "\n") != 0 || stdout != "" {
			t.Errorf("%v: exit %d, stdout %q, stderr %q: want one line, exit 2", args, code, stdout, stderr)
		}
	}
}

// The dry run states the vocabulary, the chat overhead and what each plan
// offers; characterize --replay makes the trace its scheduled plan, and
// --duration cuts a replay.
func TestTokensDryRun(t *testing.T) {
	t.Parallel()
	trace := "../internal/trace/testdata/mooncake.jsonl"
	code, stdout, stderr := runCLI(context.Background(), "characterize", "--replay", trace, "--dry-run", "--out-dir", t.TempDir(),
		"--prompt-tokens", "normal:20,40", "--seed", "3")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	for _, want := range []string{"replayed plan (" + trace + ", mooncake format", "tokens: counted in o200k_base (the default for the model or deployment name)",
		"plus 7 tokens of chat format a request", "plan 1: tokens offered per minute", "had a drawn size clipped", "plan 2: tokens offered per minute"} {
		if !strings.Contains(stdout, want) {
			t.Errorf("dry run lacks %q:\n%s", want, stdout)
		}
	}
	if strings.Contains(stdout, "warmup") {
		t.Errorf("the default phases ran beside --replay:\n%s", stdout)
	}
	_, whole, _ := runCLI(context.Background(), "schedule", "--replay", trace, "--dry-run", "--deployment", "gpt-35-turbo-prod", "--endpoint", "http://127.0.0.1:9", "--api-key-env", "PATH")
	_, cut, _ := runCLI(context.Background(), "schedule", "--replay", trace, "--duration", "2s", "--dry-run")
	if !strings.Contains(whole, "cl100k_base (the default for the model or deployment name)") || strings.Contains(whole, "gpt-35-turbo-prod") {
		t.Errorf("a gpt-35 deployment's dry run:\n%s", whole)
	}
	var nWhole, nCut int
	for _, l := range strings.Split(whole, "\n") {
		fmt.Sscanf(l, "in all: %d requests", &nWhole)
	}
	for _, l := range strings.Split(cut, "\n") {
		fmt.Sscanf(l, "in all: %d requests", &nCut)
	}
	if nWhole == 0 || nCut == 0 || nCut >= nWhole {
		t.Errorf("--duration 2s cut the replay to %d of %d requests", nCut, nWhole)
	}
}
