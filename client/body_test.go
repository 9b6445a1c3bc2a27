package client

import (
	"bytes"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/ptuprobe/ptuprobe/results"
)

// TestBodyTail: whatever the sizes of the writes, the tail holds the last
// keptBodyBytes of what was written, the head its first keptHeadBytes,
// and the count is of everything.
func TestBodyTail(t *testing.T) {
	t.Parallel()
	var all bytes.Buffer
	for i := range 3 * keptBodyBytes / 10 {
		fmt.Fprintf(&all, "%09d,", i)
	}
	for _, chunk := range []int{7, 4096, 32 << 10, keptBodyBytes - 1, keptBodyBytes, keptBodyBytes + 5, 1 << 20} {
		t.Run(fmt.Sprint(chunk), func(t *testing.T) {
			t.Parallel()
			tail := bodyTail{headCap: keptHeadBytes}
			src := all.Bytes()
			for len(src) > 0 {
				n := min(chunk, len(src))
				tail.Write(src[:n])
				src = src[n:]
			}
			want := all.Bytes()[all.Len()-keptBodyBytes:]
			if tail.n != int64(all.Len()) || !bytes.Equal(tail.buf, want) {
				t.Fatalf("count %d of %d; tail of %d bytes, equal %v", tail.n, all.Len(), len(tail.buf), bytes.Equal(tail.buf, want))
			}
			if !bytes.Equal(tail.head, all.Bytes()[:keptHeadBytes]) {
				t.Fatalf("head of %d bytes, not the first %d", len(tail.head), keptHeadBytes)
			}
			if cap(tail.buf) > 2*keptBodyBytes {
				t.Fatalf("the tail holds %d bytes of capacity", cap(tail.buf))
			}
		})
	}
}

// TestUsageOfLongBodies: a 200 answer longer than what is kept whole
// still gives its usage, from the end of the body, be it one JSON object
// or a stream; what a content string says cannot pass for usage.
func TestUsageOfLongBodies(t *testing.T) {
	t.Parallel()
	long := strings.Repeat("lorem ipsum ", 3*keptBodyBytes/12)
	tests := []struct {
		name                       string
		body                       string
		prompt, cached, completion int
		err                        string
	}{
		{"short JSON", `{"choices":[{"message":{"content":"hi"}}],"usage":{"prompt_tokens":12,"completion_tokens":3}}`, 12, results.None, 3, ""},
		{"long JSON, usage last", `{"choices":[{"message":{"content":"` + long + `"}}],"usage":{"prompt_tokens":1200,"completion_tokens":9000,"prompt_tokens_details":{"cached_tokens":1024}},"system_fingerprint":"fp"}`, 1200, 1024, 9000, ""},
		{"long JSON, no usage, a quoted one in the content", `{"choices":[{"message":{"content":"` + long + `\"usage\": {\"prompt_tokens\": 5}"}}]}`, results.None, results.None, results.None, ""},
		{"long stream", strings.Repeat(`data: {"choices":[{"delta":{"content":"lorem ipsum "}}]}`+"\n\n", 3*keptBodyBytes/60) +
			`data: {"choices":[],"usage":{"prompt_tokens":7,"completion_tokens":8000}}` + "\n\ndata: [DONE]\n\n", 7, results.None, 8000, ""},
		{"over MaxBodyBytes", `{"choices":[{"message":{"content":"` + strings.Repeat("x", MaxBodyBytes) + `"}}],"usage":{"prompt_tokens":1,"completion_tokens":1}}`,
			results.None, results.None, results.None, results.ClassBody},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, tt.body) }))
			defer srv.Close()
			r := send(newAzure(t, srv.URL))
			if r.Status != 200 || r.Error != tt.err || r.PromptTokens != tt.prompt || r.CachedTokens != tt.cached || r.CompletionTokens != tt.completion {
				t.Fatalf("row %+v, want usage %d/%d/%d, error %q", r, tt.prompt, tt.cached, tt.completion, tt.err)
			}
		})
	}
}
