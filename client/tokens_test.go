package client

import (
	"bytes"
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/ptuprobe/ptuprobe/internal/lengths"
	"github.com/ptuprobe/ptuprobe/internal/tokenize"
)

// Every word of the synthetic text is three letters and, with its
// leading space, one token under both vocabularies: a prompt of N tokens
// is 4N characters and counts N.
func TestWordsAreOneTokenEach(t *testing.T) {
	t.Parallel()
	if len(words) != 200 {
		t.Fatalf("%d words, want 200 (the lead's base)", len(words))
	}
	seen := map[string]bool{}
	for _, name := range tokenize.Names() {
		tok, _ := tokenize.Get(name)
		for _, w := range words {
			if len(w) != 3 || tok.CountString(" "+w) != 1 || seen[name+w] {
				t.Errorf("%s: word %q is not three letters and one token, or repeats", name, w)
			}
			seen[name+w] = true
		}
		if err := checkWords(tok); err != nil {
			t.Errorf("%s: %v", name, err)
		}
	}
}

// fixedShapes gives request seq the sizes of its index in prompts.
type fixedShapes struct {
	prompts []int
	blocks  [][]uint64
}

func (f fixedShapes) Shape(seq int) Shape {
	s := Shape{PromptTokens: f.prompts[seq%len(f.prompts)], MaxTokens: 50 + seq}
	if f.blocks != nil {
		s.Blocks = f.blocks[seq%len(f.blocks)]
	}
	return s
}

func (f fixedShapes) LargestPrompt() int {
	m := 0
	for _, p := range f.prompts {
		m = max(m, p)
	}
	return m
}

// texts are the texts of a body's messages as a server counts them: the
// system prefix (or instructions) and the user's text.
func texts(t *testing.T, api string, body []byte) (system, user string, maxTokens int) {
	t.Helper()
	var b struct {
		Messages []struct{ Role, Content string }
		System   []struct{ Text string }
		Contents []struct {
			Parts []struct{ Text string }
		}
		SystemInstruction *struct {
			Parts []struct{ Text string }
		}
		Instructions, Input string
		MaxTokens           int `json:"max_tokens"`
		MaxOutput           int `json:"max_output_tokens"`
		GenerationConfig    struct{ MaxOutputTokens int }
	}
	if err := json.Unmarshal(body, &b); err != nil {
		t.Fatalf("%s body: %v", api, err)
	}
	switch api {
	case APIAnthropic:
		if len(b.System) > 0 {
			system = b.System[0].Text
		}
		return system, b.Messages[0].Content, b.MaxTokens
	case APIGemini:
		if b.SystemInstruction != nil {
			system = b.SystemInstruction.Parts[0].Text
		}
		return system, b.Contents[0].Parts[0].Text, b.GenerationConfig.MaxOutputTokens
	case APIResponses:
		return b.Instructions, b.Input, b.MaxOutput
	}
	for _, m := range b.Messages {
		if m.Role == "system" {
			system = m.Content
		} else {
			user = m.Content
		}
	}
	return system, user, b.MaxTokens
}

// A synthetic prompt is its shape's size exactly under both vocabularies,
// in every API, with or without a shared prefix, however small; what
// prompt_tokens_sent counts is that and the chat format's overhead.
func TestPromptsCountExactly(t *testing.T) {
	t.Parallel()
	o200k, _ := tokenize.Get(tokenize.O200kBase)
	cl100k, _ := tokenize.Get(tokenize.Cl100kBase)
	sizes := []int{1, 2, 5, 9, 10, 11, 12, 37, 300, 513, 800, 2049}
	for _, api := range []string{APIAzure, APIOpenAI, APIAnthropic, APIGemini, APIResponses} {
		for _, prefix := range []int{0, 4} {
			cfg := Config{API: api, Endpoint: "http://127.0.0.1:1", Deployment: "d", URL: "http://127.0.0.1:1/v1/x", Model: "m",
				PromptTokens: 100, SharedPrefixTokens: prefix, MaxTokens: 10, Shapes: fixedShapes{prompts: sizes}, Tokenizer: o200k}
			if api != APIAzure {
				cfg.Endpoint = ""
			}
			tg, err := New(cfg)
			if err != nil {
				t.Fatalf("%s: %v", api, err)
			}
			for seq := range sizes {
				system, user, maxTokens := texts(t, api, tg.Body(seq))
				want := max(sizes[seq], prefix+1)
				for _, tok := range []*tokenize.Tokenizer{o200k, cl100k} {
					if got := tok.CountString(system) + tok.CountString(user); got != want {
						t.Errorf("%s prefix %d seq %d: %d tokens under %s, want %d", api, prefix, seq, got, tok.Name(), want)
					}
				}
				if len(system)+len(user) != want*CharsPerToken {
					t.Errorf("%s seq %d: %d characters, want %d", api, seq, len(system)+len(user), want*CharsPerToken)
				}
				if sent, mt := tg.sizes(seq); sent != want+ChatOverhead(api, prefix > 0) || mt != 50+seq || maxTokens != mt {
					t.Errorf("%s seq %d: sent %d, max_tokens %d (body %d), want %d and %d", api, seq, sent, mt, maxTokens, want+ChatOverhead(api, prefix > 0), 50+seq)
				}
			}
		}
	}
}

// Two requests differ from their first token of their own (the shared
// prefix aside); a trace's blocks lead the text, the same text for the
// same id, cut to fit.
func TestPromptsUniqueAndBlocksShared(t *testing.T) {
	t.Parallel()
	o200k, _ := tokenize.Get(tokenize.O200kBase)
	shapes := fixedShapes{prompts: []int{2000, 2000, 700, 1500}, blocks: [][]uint64{{7, 8, 9}, {7, 8, 10}, {7, 8}, {11}}}
	tg, err := New(Config{API: APIAzure, Endpoint: "http://127.0.0.1:1", Deployment: "d", PromptTokens: 10, MaxTokens: 10, Shapes: shapes, Tokenizer: o200k})
	if err != nil {
		t.Fatal(err)
	}
	var users []string
	for seq := range 4 {
		_, u, _ := texts(t, APIAzure, tg.Body(seq))
		if n := o200k.CountString(u); n != shapes.prompts[seq] {
			t.Fatalf("seq %d: %d tokens, want %d", seq, n, shapes.prompts[seq])
		}
		users = append(users, u)
	}
	block := BlockTokens * CharsPerToken
	if users[0][:2*block] != users[1][:2*block] || users[0][2*block:3*block] == users[1][2*block:3*block] {
		t.Error("rows sharing ids 7 and 8 and not 9 do not share exactly two blocks")
	}
	if users[2] != users[0][:700*CharsPerToken] {
		t.Error("a 700-token row of blocks 7 and 8 is not their text cut to fit")
	}
	if users[3][:4] == users[0][:4] {
		t.Error("another block's text starts with the same token")
	}
	// Past the blocks, the unique lead: rows 0 and 1 differ from there.
	plain := fixedShapes{prompts: []int{40}}
	tg, _ = New(Config{API: APIAzure, Endpoint: "http://127.0.0.1:1", Deployment: "d", PromptTokens: 10, MaxTokens: 10, Shapes: plain})
	first := map[string]int{}
	for seq := range 150 {
		_, u, _ := texts(t, APIAzure, tg.Body(seq))
		first[u[:4]]++
	}
	if len(first) != 150 {
		t.Errorf("150 requests start with %d distinct tokens, want 150", len(first))
	}
}

// The body a request sends is its Body, byte for byte, and its length.
func TestShapedBodyReader(t *testing.T) {
	t.Parallel()
	for _, api := range []string{APIAzure, APIAnthropic} {
		tg, err := New(Config{API: api, Endpoint: "http://127.0.0.1:1", Deployment: "d", URL: "http://127.0.0.1:1/v1/messages", Model: "m",
			PromptTokens: 10, MaxTokens: 10, Shapes: fixedShapes{prompts: []int{3, 900}, blocks: [][]uint64{nil, {1, 2}}}})
		if err != nil {
			t.Fatal(err)
		}
		if api == APIAzure {
			tg.cfg.Endpoint = ""
		}
		for seq := range 2 {
			open, n := tg.prompt.reader(seq)
			r, _ := open()
			var got bytes.Buffer
			got.ReadFrom(r)
			if !bytes.Equal(got.Bytes(), tg.Body(seq)) || int64(got.Len()) != n || !json.Valid(got.Bytes()) || strings.Contains(got.String(), `\`) {
				t.Errorf("%s seq %d: the reader's %d bytes (said %d) differ from the body", api, seq, got.Len(), n)
			}
		}
	}
}

// drawnShapes draws sizes as campaign's lengths do.
type drawnShapes struct{ prompt, maxTokens lengths.Dist }

func (d drawnShapes) Shape(seq int) Shape {
	p, _ := d.prompt.At(1, lengths.StreamPrompt, seq)
	m, _ := d.maxTokens.At(1, lengths.StreamMaxTokens, seq)
	return Shape{PromptTokens: p, MaxTokens: m}
}

func (d drawnShapes) LargestPrompt() int { return d.prompt.Largest() }

// BenchmarkRequest is what building request seq costs the send path: its
// request, its body's own bytes and its sizes for the row. fixed is one
// size (as before issue 36), drawn two distributions, blocks a Mooncake
// row of 4 shared blocks (2,048 tokens of block text built per request).
func BenchmarkRequest(b *testing.B) {
	prompt, _ := lengths.Parse("lognormal:800,0.5", nil)
	maxTokens, _ := lengths.Parse("uniform:50-150", nil)
	for _, c := range []struct {
		name   string
		shapes Shaper
	}{
		{"fixed", nil},
		{"drawn", drawnShapes{prompt, maxTokens}},
		{"blocks", fixedShapes{prompts: []int{2300}, blocks: [][]uint64{{1, 2, 3, 4}}}},
	} {
		b.Run(c.name, func(b *testing.B) {
			tg, err := New(Config{API: APIAzure, Endpoint: "http://127.0.0.1:1", Deployment: "d", PromptTokens: 1000, MaxTokens: 100, Shapes: c.shapes})
			if err != nil {
				b.Fatal(err)
			}
			ctx := context.Background()
			b.ReportAllocs()
			for i := 0; b.Loop(); i++ {
				req := tg.newRequest(ctx, i)
				p, m := tg.sizes(i)
				if req.ContentLength < 0 || p < 0 || m < 0 {
					b.Fatal("no body")
				}
			}
		})
	}
}
