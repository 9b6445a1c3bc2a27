package policylab

import (
	"fmt"
	"testing"
)

// labBody.of writes, without fmt, the bytes its format would: the
// simulator's witness and its parse cache see the same bodies as before.
func TestLabBodyOfIsItsFormat(t *testing.T) {
	t.Parallel()
	b := newLabBody(100, 64, []requestSize{{Prompt: 10, MaxTokens: 7}, {Prompt: 20, MaxTokens: 16384}})
	one := newLabBody(100, 64, nil)
	for _, seq := range []int{0, 1, 9, 10, 12345, 99999999, 100000000} {
		if got, want := string(one.of(seq)), fmt.Sprintf(`{"messages":[{"role":"user","content":"lab %08d"}],"max_tokens":64}`, seq); got != want {
			t.Errorf("of(%d) = %s, want %s", seq, got, want)
		}
		m := b.sizes[seq%2].MaxTokens
		want := fmt.Sprintf(`{"messages":[{"role":"user","content":"lab %08d"}],"max_tokens":%d}`, seq, m)
		if got := string(b.of(seq)); got != want {
			t.Errorf("of(%d) = %s, want %s", seq, got, want)
		}
	}
}
