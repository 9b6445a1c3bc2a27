package client

import (
	"bytes"
	"io"
	"testing"
	"testing/iotest"
)

// The request body reader gives body(seq) byte for byte, read in pieces of
// any size or written out whole, and GetBody starts it over.
func TestPromptBodyReader(t *testing.T) {
	t.Parallel()
	tg, err := New(Config{API: APIAzure, Endpoint: "http://127.0.0.1:1", Deployment: "d", PromptTokens: 300, MaxTokens: 10})
	if err != nil {
		t.Fatal(err)
	}
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
	}
}
