package campaign

import (
	"fmt"
	"math"
	"os"
	"slices"
	"time"

	"github.com/ptuprobe/ptuprobe/client"
	"github.com/ptuprobe/ptuprobe/internal/lengths"
	"github.com/ptuprobe/ptuprobe/internal/num"
	"github.com/ptuprobe/ptuprobe/internal/tokenize"
	"github.com/ptuprobe/ptuprobe/internal/trace"
	"github.com/ptuprobe/ptuprobe/internal/valid"
)

// Lengths draws each request's prompt and output sizes by its sequence
// number under Seed (lengths.Dist.At), so shards and reruns agree. A
// zero Dist is the Spec's fixed PromptTokens or MaxTokens.
type Lengths struct {
	Prompt, MaxTokens lengths.Dist
	Seed              uint64
}

// Orders of a prompts file's lines (Target.PromptsOrder).
const (
	PromptsInOrder = "order"  // line seq mod n: in order, cycled
	PromptsRandom  = "random" // a line drawn by the seed and seq
)

// tokenizer is the vocabulary the target counts in: Tokenizer, else the
// default for the model or deployment the Spec names.
func (t *Target) tokenizer() string {
	if t.Tokenizer != "" {
		return t.Tokenizer
	}
	name := t.Spec.Model
	if t.Spec.Deployment != "" {
		name = t.Spec.Deployment
	}
	return tokenize.Default(name)
}

// TokenizerName is the vocabulary prompts are counted in, and whether it
// is the default for the model or deployment name (for a dry run).
func (t *Target) TokenizerName() (name string, byDefault bool) {
	return t.tokenizer(), t.Tokenizer == ""
}

// shapes is the Shaper of Lengths: nil when both sizes are fixed (the
// Spec's).
func (t *Target) shapes() client.Shaper {
	l := t.Lengths
	_, fixedPrompt := l.Prompt.IsFixed()
	_, fixedMax := l.MaxTokens.IsFixed()
	if (!l.Prompt.Valid() || fixedPrompt) && (!l.MaxTokens.Valid() || fixedMax) {
		return nil
	}
	s := lengthShapes{prompt: l.Prompt, maxTokens: l.MaxTokens, seed: l.Seed}
	if !s.prompt.Valid() {
		s.prompt = lengths.Fixed(t.Spec.PromptTokens)
	}
	if !s.maxTokens.Valid() {
		s.maxTokens = lengths.Fixed(t.Spec.MaxTokens)
	}
	return s
}

// checkTokens checks the token settings: the vocabulary's name, the
// prompts file's order, the sizes' bounds. The name is checked without
// loading its vocabulary, which only a prompts file needs (configure).
func (t *Target) checkTokens() error {
	if t.Tokenizer != "" && !slices.Contains(tokenize.Names(), t.Tokenizer) {
		return valid.Errorf("Tokenizer", "must be %s or %s", tokenize.O200kBase, tokenize.Cl100kBase)
	}
	switch t.PromptsOrder {
	case "", PromptsInOrder, PromptsRandom:
	default:
		return valid.Errorf("PromptsOrder", "must be %s or %s", PromptsInOrder, PromptsRandom)
	}
	if t.PromptsOrder != "" && t.Prompts == "" {
		return valid.Errorf("PromptsOrder", "needs {Prompts}")
	}
	if t.Prompts != "" && t.Spec.SharedPrefixTokens > 0 {
		return valid.Errorf("SharedPrefixTokens", "goes not with {Prompts}, whose lines are sent as written")
	}
	return nil
}

// configure sets the client's token settings: the sizes' Shaper, the
// prompts file (read once, its lines counted under the vocabulary) and
// its order. The vocabulary is loaded only for a prompts file: a
// synthetic prompt is built to its count by construction.
func (t *Target) configure(cfg *client.Config) error {
	if err := t.checkTokens(); err != nil {
		return err
	}
	if s := t.shapes(); s != nil {
		cfg.Shapes = s
	}
	if t.Prompts == "" {
		return nil
	}
	if t.prompts == nil {
		p, err := readPrompts(t.Prompts)
		if err != nil {
			return err
		}
		t.prompts = p
	}
	tok, err := tokenize.Get(t.tokenizer())
	if err != nil {
		return valid.Errorf("Tokenizer", "must be %s or %s", tokenize.O200kBase, tokenize.Cl100kBase)
	}
	cfg.Prompts, cfg.Tokenizer = t.prompts, tok
	if t.PromptsOrder == PromptsRandom {
		seed := t.Lengths.Seed
		cfg.PromptLine = func(seq, n int) int {
			return int(lengths.Uniform(seed, lengths.StreamPrompts, seq) * float64(n))
		}
	}
	return nil
}

// readPrompts reads a prompts file: a regular file (a FIFO would be read
// once and be empty for the run), its errors naming the file and line,
// never quoting a line.
func readPrompts(path string) (*client.Prompts, error) {
	fi, err := os.Stat(path)
	if err != nil {
		return nil, valid.Errorf("Prompts", "cannot be read: %v", pathless(err))
	}
	if !fi.Mode().IsRegular() {
		return nil, valid.Errorf("Prompts", "must be a regular file")
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, valid.Errorf("Prompts", "cannot be read: %v", pathless(err))
	}
	defer f.Close()
	p, err := client.ReadPrompts(f)
	if err != nil {
		return nil, valid.Errorf("Prompts", "%s: %v", path, err)
	}
	return p, nil
}

// pathless is err without the path an *os.PathError repeats.
func pathless(err error) error {
	if pe, ok := err.(*os.PathError); ok {
		return pe.Err
	}
	return err
}

// lengthShapes draws each request's sizes from two distributions.
type lengthShapes struct {
	prompt, maxTokens lengths.Dist
	seed              uint64
}

func (s lengthShapes) Shape(seq int) client.Shape {
	p, _ := s.prompt.At(s.seed, lengths.StreamPrompt, seq)
	m, _ := s.maxTokens.At(s.seed, lengths.StreamMaxTokens, seq)
	return client.Shape{PromptTokens: p, MaxTokens: m}
}

func (s lengthShapes) LargestPrompt() int { return s.prompt.Largest() }

// MaxTokensFactor bounds Replay's factor: an output cap is the row's
// output length times 1/100 to 100.
const MaxTokensFactor = 100

// TraceShapes sizes request seq as the trace's row seq: its prompt (its
// hash blocks leading it), and max_tokens its output length × factor
// (rounded, at least 1, at most client.MaxCompletionTokens).
func TraceShapes(t *trace.Trace, factor float64) (client.Shaper, error) {
	if !(factor >= 1.0/MaxTokensFactor && factor <= MaxTokensFactor) {
		return nil, valid.Errorf("MaxTokensFactor", "must be from %g to %d", 1.0/MaxTokensFactor, MaxTokensFactor)
	}
	s := &traceShapes{shapes: make([]client.Shape, len(t.Rows))}
	n := 0
	for _, r := range t.Rows {
		n += len(r.HashIDs)
	}
	ids := make([]uint64, 0, n)
	for i, r := range t.Rows {
		start := len(ids)
		for _, h := range r.HashIDs {
			ids = append(ids, uint64(h))
		}
		m := int(math.Round(float64(r.OutputTokens) * factor))
		s.shapes[i] = client.Shape{
			PromptTokens: min(max(r.InputTokens, 1), client.MaxPromptTokens),
			MaxTokens:    min(max(m, 1), client.MaxCompletionTokens),
			Blocks:       ids[start:len(ids):len(ids)],
		}
		s.largest = max(s.largest, s.shapes[i].PromptTokens)
	}
	return s, nil
}

type traceShapes struct {
	shapes  []client.Shape
	largest int
}

func (s *traceShapes) Shape(seq int) client.Shape {
	if seq < 0 || seq >= len(s.shapes) {
		return s.shapes[len(s.shapes)-1] // past the plan: never sent
	}
	return s.shapes[seq]
}

func (s *traceShapes) LargestPrompt() int { return s.largest }

// Offered is what a plan offers in tokens (each request's
// prompt_tokens_sent and max_tokens), per minute: the mean over the
// plan, the p99 over its arrivals of the minute up to each (a plan of a
// minute or less: its total, both), and how many requests' sizes a
// distribution's tail clipped to the bounds.
type Offered struct {
	Mean, P99 float64
	Clipped   int
	Requests  int
}

// OfferedTokens reads what plan p offers, sized by the client the run
// would build (nothing is sent or started). It uses up the plan's pacer:
// it is for a dry run.
func (t *Target) OfferedTokens(p Plan) (Offered, error) {
	c, err := t.sizer()
	if err != nil {
		return Offered{}, err
	}
	defer c.Close()
	if p.Shapes != nil {
		if c, err = c.WithShapes(p.Shapes); err != nil {
			return Offered{}, err
		}
	}
	var at []time.Duration
	for len(at) < 10_000_000 {
		off, _, ok := p.Pacer.Next()
		if !ok {
			break
		}
		at = append(at, off)
	}
	o := Offered{Requests: len(at)}
	if len(at) == 0 {
		return o, nil
	}
	ls, drawn := t.shapes().(lengthShapes)
	tokens := make([]float64, len(at))
	total := 0.0
	for i := range at {
		prompt, maxTokens := c.Sizes(i)
		tokens[i] = float64(max(prompt, 0) + max(maxTokens, 0))
		total += tokens[i]
		if drawn && p.Shapes == nil {
			_, c1 := ls.prompt.At(ls.seed, lengths.StreamPrompt, i)
			_, c2 := ls.maxTokens.At(ls.seed, lengths.StreamMaxTokens, i)
			if c1 || c2 {
				o.Clipped++
			}
		}
	}
	span := max(p.Span, at[len(at)-1], time.Millisecond)
	// A plan of a minute or less offers all it has within one minute.
	o.Mean, o.P99 = total, total
	if span > time.Minute {
		o.Mean = total / span.Minutes()
		o.P99 = slidingP99(at, tokens, time.Minute)
	}
	return o, nil
}

// ChatOverhead is the chat format's tokens around a synthetic request's
// text, as prompt_tokens_sent counts them (client.ChatOverhead).
func (t *Target) ChatOverhead() (int, error) {
	c, err := t.sizer()
	if err != nil {
		return 0, err
	}
	defer c.Close()
	return c.ChatOverhead(), nil
}

// sizer is the client a run would build, to size requests: the named
// target's, or the embedded simulator's at an address never dialed.
func (t *Target) sizer() (*client.Target, error) {
	if !t.Embedded() {
		return t.named()
	}
	return t.simulated("http://127.0.0.1:1", t.Sim.Deployment, nil)
}

// slidingP99 is the p99, over the arrivals a whole window after the
// first, of the tokens of the window of that length ending at each.
func slidingP99(at []time.Duration, tokens []float64, window time.Duration) float64 {
	var sums []float64
	sum, lo := 0.0, 0
	for i := range at {
		sum += tokens[i]
		for at[lo] <= at[i]-window {
			sum -= tokens[lo]
			lo++
		}
		if at[i] >= at[0]+window {
			sums = append(sums, sum)
		}
	}
	if len(sums) == 0 {
		return sum
	}
	slices.Sort(sums)
	return sums[min(len(sums)-1, int(math.Ceil(0.99*float64(len(sums))))-1)]
}

// describeOffered words o for a dry run.
func describeOffered(o Offered) string {
	s := fmt.Sprintf("tokens offered per minute (prompt_tokens_sent + max_tokens): mean %s, p99 %s", num.Grouped(o.Mean, 0), num.Grouped(o.P99, 0))
	if o.Clipped > 0 {
		s += fmt.Sprintf("; %d of %d requests (%.2f%%) had a drawn size clipped to %d–%d tokens", o.Clipped, o.Requests, 100*float64(o.Clipped)/float64(o.Requests), lengths.Min, lengths.Max)
	}
	return s
}
