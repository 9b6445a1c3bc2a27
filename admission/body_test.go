package admission

import (
	"bytes"
	"errors"
	"io"
	"testing"
)

// TestPeekedBodyReadsAsAMultiReader: a peeked body reads as the
// io.MultiReader of what was read and the rest it replaced, byte for byte
// and error for error, whatever the reader's buffer, for every rest
// peekBody makes (the end, a read error, a body longer than the peek);
// and drain closes it, read to its end or not.
func TestPeekedBodyReadsAsAMultiReader(t *testing.T) {
	boom := errors.New("boom")
	rests := map[string]func() io.Reader{
		"eof":  func() io.Reader { return eofReader{} },
		"err":  func() io.Reader { return errReader{boom} },
		"more": func() io.Reader { return bytes.NewReader([]byte("and the rest of it")) },
	}
	for name, rest := range rests {
		for _, data := range []string{"", "x", `{"error":{"code":"429"}}`} {
			for _, size := range []int{0, 1, 3, 7, 64} {
				want := readAll(io.MultiReader(bytes.NewReader([]byte(data)), rest()), size)
				got := readAll(&peekedBody{data: []byte(data), rest: rest(), Closer: io.NopCloser(nil)}, size)
				if got != want {
					t.Errorf("%s, %q, buffer %d: read %s, want %s", name, data, size, got, want)
				}
			}
			c := &closeCount{}
			drain(&peekedBody{data: []byte(data), rest: rest(), Closer: c})
			if c.n != 1 {
				t.Errorf("%s, %q: drain closed the body %d times, want once", name, data, c.n)
			}
		}
	}
}

// readAll reads r with a buffer of size bytes, at most 40 reads, and
// writes down every read's bytes and error.
func readAll(r io.Reader, size int) string {
	var out bytes.Buffer
	buf := make([]byte, size)
	for range 40 {
		n, err := r.Read(buf)
		out.WriteString("[" + string(buf[:n]))
		if err != nil {
			out.WriteString("|" + err.Error() + "]")
			if size > 0 {
				break
			}
			continue
		}
		out.WriteString("]")
	}
	return out.String()
}

type closeCount struct{ n int }

func (c *closeCount) Close() error { c.n++; return nil }
