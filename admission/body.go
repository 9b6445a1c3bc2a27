package admission

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"net/http"
	"sync/atomic"
	"time"

	"github.com/ptuprobe/ptuprobe/retryafter"
)

// replay hands out a request's body once per attempt: the original body to
// the first, then fresh copies from GetBody or from a bounded buffer, as
// http.Client does for a redirect.
type replay struct {
	first io.ReadCloser // the original body while no attempt has taken it
	get   func() (io.ReadCloser, error)
}

// newReplay prepares req's body for attempts. Without retries (once)
// nothing is buffered. A body without GetBody is read, up to limit bytes,
// and closed; a larger one is a *ReplayError. On error req.Body is closed.
func newReplay(req *http.Request, once bool, limit int64) (*replay, error) {
	if req.Body == nil || req.Body == http.NoBody {
		return &replay{}, nil
	}
	if once || req.GetBody != nil {
		return &replay{first: req.Body, get: req.GetBody}, nil
	}
	data, err := io.ReadAll(io.LimitReader(req.Body, limit+1))
	req.Body.Close()
	if err != nil {
		return nil, fmt.Errorf("admission: read the request body to replay it: %w", err)
	}
	if int64(len(data)) > limit {
		return nil, &ReplayError{Limit: limit}
	}
	return &replay{get: func() (io.ReadCloser, error) {
		return io.NopCloser(bytes.NewReader(data)), nil
	}}, nil
}

// next returns the body for the next attempt, nil for a request without one.
func (b *replay) next() (io.ReadCloser, error) {
	if b.first != nil {
		r := b.first
		b.first = nil
		return r, nil
	}
	if b.get == nil {
		return nil, nil
	}
	return b.get()
}

// close closes the original body if no attempt took it: a RoundTripper
// closes its request's body whatever happens.
func (b *replay) close() {
	if b.first != nil {
		b.first.Close()
		b.first = nil
	}
}

// drainLimit bounds how much of a refusal's body is read before it is
// closed: enough for any error document, so the connection is reused,
// not so much that a hostile body is read without end. It is also what
// peekBody reads for advice: retryafter.MaxBody.
const drainLimit = retryafter.MaxBody

// peekBody reads the start of a refusal's body, up to drainLimit bytes,
// for the advice it may hold, and puts what it read back in front of the
// rest: a refusal returned to the caller (an outage, or ReturnLastResponse)
// keeps its whole body, and a read error comes back to the caller at the
// same place. A read still going after within (when it is not negative)
// is ended by closing the body: the rest of it is errBodyPastBudget.
func peekBody(resp *http.Response, within time.Duration) []byte {
	if resp.Body == nil || resp.Body == http.NoBody {
		return nil
	}
	// state settles who ends the read: the read itself (readDone) or the
	// timer (closedLate), whichever comes first; the timer closes the body
	// only when it wins.
	var state atomic.Int32
	if within >= 0 {
		body := resp.Body
		timer := time.AfterFunc(within, func() {
			if state.CompareAndSwap(reading, closedLate) {
				body.Close()
			}
		})
		defer timer.Stop()
	}
	data, err := readStart(resp.Body, resp.ContentLength)
	if !state.CompareAndSwap(reading, readDone) {
		err = errBodyPastBudget
	}
	rest := io.Reader(resp.Body)
	switch {
	case errors.Is(err, io.EOF):
		rest = eofReader{}
	case err != nil:
		rest = errReader{err}
	}
	resp.Body = &peekedBody{data: data, rest: rest, Closer: resp.Body}
	return data
}

// readStart reads body up to drainLimit bytes, as io.CopyN would (io.EOF
// when it ended before). When its length is known (n ≥ 0), into a
// buffer of that length and a byte more, to see its end: a refusal's body
// is a few hundred bytes, which a buffer grown by doubling would copy and
// allocate three times over.
func readStart(body io.Reader, n int64) ([]byte, error) {
	if n < 0 || n >= drainLimit {
		var buf bytes.Buffer
		_, err := io.CopyN(&buf, body, drainLimit)
		return buf.Bytes(), err
	}
	data := make([]byte, n+1)
	k, err := io.ReadFull(body, data)
	data = data[:k]
	switch {
	case errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, io.EOF):
		return data, io.EOF
	case err != nil:
		return data, err
	}
	// Longer than it said: the rest as any body, to drainLimit.
	buf := bytes.NewBuffer(data)
	_, err = io.CopyN(buf, body, drainLimit-int64(len(data)))
	return buf.Bytes(), err
}

// The states of peekBody's read.
const (
	reading int32 = iota
	readDone
	closedLate
)

// errBodyPastBudget is what reading a refusal's body returns past what the
// Transport read when the budget ran out during its read.
var errBodyPastBudget = errors.New("admission: the refusal's body was still arriving when the budget ran out; it was closed")

// peekedBody is a body whose start was read: what was read, then the rest,
// closed as the original.
type peekedBody struct {
	data []byte // what was read and is not yet read again
	rest io.Reader
	io.Closer
}

// Read reads what was read first, then the rest: io.MultiReader of a
// bytes.Reader and the rest, in one allocation instead of four (every
// refusal a retry owner reads is peeked).
func (p *peekedBody) Read(b []byte) (int, error) {
	if len(p.data) > 0 {
		n := copy(b, p.data)
		p.data = p.data[n:]
		return n, nil
	}
	return p.rest.Read(b)
}

type eofReader struct{}

func (eofReader) Read([]byte) (int, error) { return 0, io.EOF }

type errReader struct{ err error }

func (e errReader) Read([]byte) (int, error) { return 0, e.err }

func drain(body io.ReadCloser) {
	if p, ok := body.(*peekedBody); ok {
		if _, whole := p.rest.(eofReader); whole {
			// Read to its end already: nothing left to drain.
			p.data = nil
			body.Close()
			return
		}
	}
	io.CopyN(io.Discard, body, drainLimit)
	body.Close()
}
