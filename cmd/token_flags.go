package cmd

import (
	"fmt"
	"io"
	"os"
	"strconv"

	"github.com/spf13/pflag"

	"github.com/ptuprobe/ptuprobe/client"
	"github.com/ptuprobe/ptuprobe/internal/campaign"
	"github.com/ptuprobe/ptuprobe/internal/lengths"
)

// tokenFlags are the flags that say what a request carries in tokens:
// the sizes (fixed or drawn), the vocabulary, the user's own prompts.
type tokenFlags struct {
	promptSpec, maxSpec string
	tokenizer           string
	prompts, order      string
	fs                  *pflag.FlagSet // where --seed is, when the command has one
	lengths             campaign.Lengths
}

const lengthForms = "N, uniform:A-B, normal:MEAN,SD, lognormal:MEDIAN,SIGMA or file:PATH (one count a line)"

func (t *tokenFlags) add(fs *pflag.FlagSet) {
	t.fs = fs
	fs.StringVar(&t.promptSpec, "prompt-tokens", strconv.Itoa(client.DefaultPromptTokens), "prompt size in tokens, exact under --tokenizer: "+lengthForms+", drawn per request by --seed")
	fs.StringVar(&t.maxSpec, "max-tokens", strconv.Itoa(client.DefaultMaxTokens), "output cap requested per call (max_tokens; maxOutputTokens for --api gemini): "+lengthForms+", drawn per request by --seed")
	fs.StringVar(&t.tokenizer, "tokenizer", "", "vocabulary prompts are counted in: o200k_base or cl100k_base (default by the model or deployment name: gpt-4 and gpt-3.5 cl100k_base, else o200k_base)")
	fs.StringVar(&t.prompts, "prompts", "", `send your own requests from a JSON-lines file, one a line: {"messages":[…]}, {"prompt":"…"} or {"input":…}, optionally "max_tokens" (their text is never written anywhere: only counts)`)
	fs.StringVar(&t.order, "prompts-order", campaign.PromptsInOrder, "order of --prompts' lines: order (in order, cycled) or random (drawn by --seed)")
}

// addSeed registers --seed for a command without a scheduled plan
// (burst, calibrate), whose sizes are still drawn.
func (t *tokenFlags) addSeed(fs *pflag.FlagSet) {
	fs.Uint64("seed", 1, "seed of the sizes drawn per request (--prompt-tokens, --max-tokens, --prompts-order random)")
}

// seed is --seed's value where the command has one, else 1.
func (t *tokenFlags) seed() uint64 {
	if t.fs == nil {
		return 1
	}
	if f := t.fs.Lookup("seed"); f != nil {
		if v, err := strconv.ParseUint(f.Value.String(), 10, 64); err == nil {
			return v
		}
	}
	return 1
}

// resolve parses the sizes into tf (the fixed size, or the largest a
// draw can give, for the checks of a fixed size) and the lengths.
func (t *tokenFlags) resolve(tf *targetFlags) error {
	p, err := lengths.Parse(t.promptSpec, readCounts)
	if err != nil {
		return usageError("--prompt-tokens: %v", err)
	}
	m, err := lengths.Parse(t.maxSpec, readCounts)
	if err != nil {
		return usageError("--max-tokens: %v", err)
	}
	t.lengths = campaign.Lengths{Prompt: p, MaxTokens: m, Seed: t.seed()}
	tf.promptTokens, tf.maxTokens = p.Largest(), m.Largest()
	if t.fs != nil && !t.fs.Changed("prompts-order") {
		t.order = ""
	}
	return nil
}

// fixed is the sizes when both are fixed, for a command that takes only
// N (the policy lab).
func (t *tokenFlags) fixed() (prompt, maxTokens int, err error) {
	p, ok1 := t.lengths.Prompt.IsFixed()
	m, ok2 := t.lengths.MaxTokens.IsFixed()
	if !ok1 || !ok2 {
		return 0, 0, usageError("--prompt-tokens and --max-tokens take one size N here, not a distribution")
	}
	if t.prompts != "" {
		return 0, 0, usageError("--prompts is for the traffic commands")
	}
	return p, m, nil
}

// readCounts reads a file:PATH of counts: a regular file, bounded.
func readCounts(path string) ([]byte, error) {
	fi, err := os.Stat(path)
	if err != nil {
		return nil, pathless(err)
	}
	if !fi.Mode().IsRegular() {
		return nil, fmt.Errorf("not a regular file")
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, pathless(err)
	}
	defer f.Close()
	return io.ReadAll(io.LimitReader(f, lengths.MaxFileBytes+1))
}

// pathless is err without the path an *os.PathError repeats.
func pathless(err error) error {
	if pe, ok := err.(*os.PathError); ok {
		return pe.Err
	}
	return err
}
