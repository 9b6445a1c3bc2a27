package client

import (
	"net/http"
	"testing"
)

// A request asks for no content coding: net/http's Accept-Encoding: gzip
// (with a header map of its own held for each request's life) is off, and
// an answer is read as it comes.
func TestNoCompressionAsked(t *testing.T) {
	t.Parallel()
	srv, seen := recordingServer(t, http.StatusOK)
	tg := newAzure(t, srv.URL+"/")
	send(tg)
	got := <-seen
	if v, ok := got.header["Accept-Encoding"]; ok {
		t.Fatalf("Accept-Encoding %q sent", v)
	}
}
