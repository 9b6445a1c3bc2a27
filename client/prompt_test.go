package client

import (
	"bytes"
	"io"
	"testing"
	"testing/iotest"
)

// The request body reader gives body(seq) byte for byte, read in pieces of
// any size or written out whole, and GetBody starts it over; the same for
// a body built into a pooled buffer (300 tokens) and one read in pieces
// (20,000 tokens: past pooledBodyMax).
func TestPromptBodyReader(t *testing.T) {
	t.Parallel()
	for _, c := range []struct{ prompt, max int }{{300, 10}, {300, 999999}, {20000, 7}} {
		tg, err := New(Config{API: APIAzure, Endpoint: "http://127.0.0.1:1", Deployment: "d", PromptTokens: c.prompt, MaxTokens: c.max})
		if err != nil {
			t.Fatal(err)
		}
		testPromptBodyReader(t, tg)
	}
}

func testPromptBodyReader(t *testing.T, tg *Target) {
	for _, seq := range []int{0, 7, 123456789} {
		want := tg.prompt.body(seq)
		open, n := tg.prompt.reader(seq)
		if n != int64(len(want)) {
			t.Fatalf("seq %d: length %d, body %d bytes", seq, n, len(want))
		}
		r, _ := open()
		if err := iotest.TestReader(r, want); err != nil {
			t.Errorf("seq %d: %v", seq, err)
		}
		r, _ = open()
		var got bytes.Buffer
		if m, err := r.(io.WriterTo).WriteTo(&got); err != nil || m != n || !bytes.Equal(got.Bytes(), want) {
			t.Errorf("seq %d: WriteTo wrote %d bytes (%v), equal %v", seq, m, err, bytes.Equal(got.Bytes(), want))
		}
		// Half read, then written out: the rest, once.
		r, _ = open()
		half := make([]byte, len(want)/2)
		io.ReadFull(r, half)
		got.Reset()
		r.(io.WriterTo).WriteTo(&got)
		if !bytes.Equal(append(half, got.Bytes()...), want) {
			t.Errorf("seq %d: read then WriteTo differs", seq)
		}
		// Closed half read (its pooled buffer given back), then opened
		// again: the whole body, and the closed one reads no more.
		r.Close()
		r2, _ := open()
		if err := iotest.TestReader(r2, want); err != nil {
			t.Errorf("seq %d after a close: %v", seq, err)
		}
		if _, isPooled := r.(*pooledBody); isPooled {
			if n, err := r.Read(make([]byte, 8)); n != 0 || err == nil {
				t.Errorf("seq %d: read after close: %d bytes, %v", seq, n, err)
			}
		}
	}
}
