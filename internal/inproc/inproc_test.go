package inproc

import (
	"io"
	"net/http"
	"strconv"
	"strings"
	"testing"
)

// closeCounter is a request body that counts its Close.
type closeCounter struct {
	io.Reader
	closed int
}

func (c *closeCounter) Close() error { c.closed++; return nil }

func serve(t *testing.T, tr Transport, body string) (*http.Response, string, *closeCounter) {
	t.Helper()
	cc := &closeCounter{Reader: strings.NewReader(body)}
	req, err := http.NewRequest(http.MethodPost, "http://inproc.invalid/x", cc)
	if err != nil {
		t.Fatal(err)
	}
	resp, err := tr.RoundTrip(req)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	if resp.Request != req {
		t.Error("the response does not carry its request")
	}
	return resp, string(b), cc
}

// TestTransport: the handler's status, headers and body come back as the
// response, on the calling goroutine, the request's body closed; a
// status never written is 200; BodyOf drops the bodies it refuses.
func TestTransport(t *testing.T) {
	t.Parallel()
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		in, _ := io.ReadAll(r.Body)
		switch string(in) {
		case "refuse":
			w.Header().Set("Retry-After-Ms", "120")
			w.WriteHeader(http.StatusTooManyRequests)
			w.WriteHeader(http.StatusOK) // a second status is ignored, as net/http does
			io.WriteString(w, `{"error":"busy"}`)
		case "stream":
			io.WriteString(w, "data: 1\n\n")
			w.(http.Flusher).Flush()
			io.WriteString(w, "data: 2\n\n")
		}
	})
	resp, body, cc := serve(t, Transport{Handler: h}, "refuse")
	if resp.StatusCode != 429 || resp.Status != "429 Too Many Requests" || resp.Header.Get("Retry-After-Ms") != "120" || body != `{"error":"busy"}` || resp.ContentLength != int64(len(body)) {
		t.Errorf("refusal: %d %q %v %q", resp.StatusCode, resp.Status, resp.Header, body)
	}
	if cc.closed != 1 {
		t.Errorf("the request body was closed %d times", cc.closed)
	}
	resp, body, _ = serve(t, Transport{Handler: h}, "stream")
	if resp.StatusCode != 200 || body != "data: 1\n\ndata: 2\n\n" || resp.ProtoMajor != 1 {
		t.Errorf("stream: %d %q", resp.StatusCode, body)
	}
	resp, body, _ = serve(t, Transport{Handler: h}, "nothing")
	if resp.StatusCode != 200 || body != "" {
		t.Errorf("nothing written: %d %q", resp.StatusCode, body)
	}
	onlyRefusals := Transport{Handler: h, BodyOf: func(s int) bool { return s == 429 }}
	if _, body, _ = serve(t, onlyRefusals, "stream"); body != "" {
		t.Errorf("a 200 kept its body %q under BodyOf", body)
	}
	if _, body, _ = serve(t, onlyRefusals, "refuse"); body != `{"error":"busy"}` {
		t.Errorf("a 429 lost its body under BodyOf: %q", body)
	}
}

// The constant status lines are the ones net/http would write.
func TestStatusLine(t *testing.T) {
	for _, code := range []int{200, 429, 503, 404} {
		if got, want := statusLine(code), strconv.Itoa(code)+" "+http.StatusText(code); got != want {
			t.Errorf("statusLine(%d) = %q, want %q", code, got, want)
		}
	}
}
