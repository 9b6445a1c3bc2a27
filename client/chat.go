package client

import (
	"net/http"

	"github.com/ptuprobe/ptuprobe/results"
)

// chatDialect is what the chat completion APIs share (azure, openai, and
// raw's reading of an answer): the body chatCompletionFrame and chatLine
// build, OpenAI's usage, read by parseUsage and, streamed, by chatStream.
type chatDialect struct{}

func (chatDialect) frame(cfg *Config, system string) (before, after string) {
	return chatCompletionFrame(cfg, system)
}

func (chatDialect) line(cfg *Config, pl *promptLine) (pre, post []byte, err error) {
	return chatLine(cfg, pl)
}

func (chatDialect) overhead(messages int) int   { return 4*messages + 3 }
func (chatDialect) ownCap() bool                { return false }
func (chatDialect) header(*Config, http.Header) {}
func (chatDialect) stream() streamUsage         { return &chatStream{} }
func (chatDialect) headBytes(bool) int          { return 0 }

func (chatDialect) usage(b *bodyTail, rec *results.Record) {
	parseUsage(b.buf, b.n <= keptBodyBytes, rec)
}
