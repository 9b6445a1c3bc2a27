package client

import (
	"bytes"
	"io"
	"sync"
	"unicode"
	"unicode/utf8"
)

// An event stream's usage is read event by event, as the events come:
// an open stream holds the event in progress and the counts so far, not
// its body (a kept tail of 2.2 KB a stream was a sixth of the client's
// live heap with a thousand streams open, bench/README.md). Each API's
// usage is a streamUsage, fed by events, which also tells which events
// carry content (a token), for the stream's timing (streamTiming).

// streamUsage is what an event stream is read into, in the dialect of
// the target's API: its usage, and which of its events are content.
type streamUsage interface {
	// event reads the data of one event, trimmed of white space, and
	// reports whether it carries content: a token of the answer (text,
	// a tool call's, a refusal's or reasoning text), not a role-only,
	// prompt-filter, start or usage event. It allocates nothing for a
	// content event: an answer's cost must not grow with its length.
	event(data []byte) (content bool)
	// cut reads an event whose data was longer than maxEventBytes, from
	// its first eventHeadBytes and its last eventTailBytes: the Responses
	// API's final event carries the whole output, of which a row needs
	// only the usage, its last member. It reports whether the event, by
	// its head, is content.
	cut(head, tail []byte) (content bool)
	// counted is the token counts read.
	counted() tokens
}

// Bounds of the event in progress.
const (
	maxEventBytes  = 8 << 10
	eventHeadBytes = 256
	eventTailBytes = 4 << 10
)

// streamRead is the room a streamed answer is read into: an event is a
// few hundred bytes, and the connection (or HTTP/2 stream) buffers what
// has come.
const streamRead = 512

// usageFor is the streamUsage of the target's API (its dialect's; raw
// targets are read as OpenAI's).
func (t *Target) usageFor() streamUsage { return dialectOf(t.cfg.API).stream() }

// events splits a server-sent event stream into its events as its bytes
// come, and gives each event's data to u: its data lines joined by
// newlines (the event's name is left to the data, whose type every API
// here repeats). Lines end in LF, CRLF or CR; fields other than data and
// comments are passed over; a last event without its blank line is
// still given (end).
type events struct {
	u     streamUsage
	tm    *streamTiming // nil: the events are not timed
	field int           // how much of the line's start matches "data:"; dataLine: a data line, -1: another
	space bool          // a data line's one optional space may come next
	cr    bool          // the last byte was a CR: an LF next is the same line end
	blank bool          // nothing yet on this line: its end ends the event
	has   bool          // the event has data
	isCut bool          // its data passed maxEventBytes: head and the last bytes in data are kept
	data  []byte        // the event in progress, in buf's room
	buf   *eventRoom    // from eventPool while an event is in progress
	head  []byte
}

// eventRoom is the room an event in progress is gathered in, taken from
// eventPool at its first data and given back when it ends: an event
// comes whole in one read as a rule, so an open stream between its
// events holds none (a few hundred bytes a stream, kept for its life,
// were a twentieth of the live heap with a thousand streams open,
// bench/README.md).
type eventRoom struct{ b []byte }

var eventPool = sync.Pool{New: func() any { return new(eventRoom) }}

// maxPooledEvent bounds the room given back to eventPool: what an event
// read as it comes may hold (maxEventBytes, a read's bytes past it, then
// its head and last bytes), no more.
const maxPooledEvent = 2*maxEventBytes + streamRead

// dataLine is events.field on a data line, past "data:".
const dataLine = len(dataField) + 1

func newEvents(u streamUsage) *events { return &events{u: u, blank: true} }

// Write takes the stream's next bytes.
func (e *events) Write(p []byte) (int, error) {
	n := len(p)
	for len(p) > 0 {
		c := p[0]
		if e.cr && c == '\n' {
			e.cr = false
			p = p[1:]
			continue
		}
		e.cr = false
		switch {
		case c == '\r' || c == '\n':
			e.endLine()
			e.cr = c == '\r'
			p = p[1:]
			continue
		case e.field == dataLine:
			if e.space {
				e.space = false
				if c == ' ' {
					p = p[1:]
					continue
				}
			}
			i := untilLineEnd(p)
			e.add(p[:i])
			p = p[i:]
		case e.field < 0:
			p = p[untilLineEnd(p):]
		case c != dataField[e.field]:
			e.field = -1
			p = p[1:]
		default:
			if e.field++; e.field == len(dataField) {
				e.startData()
			}
			p = p[1:]
		}
		e.blank = false
	}
	return n, nil
}

// untilLineEnd is the index of the first CR or LF in p, or len(p).
func untilLineEnd(p []byte) int {
	if i := bytes.IndexAny(p, "\r\n"); i >= 0 {
		return i
	}
	return len(p)
}

// startData begins a data line: its value joins the event's data.
func (e *events) startData() {
	e.field, e.space = dataLine, true
	if e.has {
		e.add([]byte{'\n'})
	}
	e.has = true
}

// add appends b to the event's data, keeping its head and last bytes
// once it passes maxEventBytes.
func (e *events) add(b []byte) {
	if e.buf == nil {
		e.buf = eventPool.Get().(*eventRoom)
		e.data = e.buf.b[:0]
	}
	e.data = append(e.data, b...)
	if !e.isCut && len(e.data) > maxEventBytes {
		e.isCut = true
		e.head = append(e.head[:0], e.data[:eventHeadBytes]...)
	}
	if e.isCut && len(e.data) > 2*eventTailBytes {
		e.data = e.data[:copy(e.data, e.data[len(e.data)-eventTailBytes:])]
	}
}

// endLine ends the line in progress; an empty line ends the event.
func (e *events) endLine() {
	if e.blank {
		e.flush()
	}
	e.field, e.space, e.blank = 0, false, true
}

// flush gives the event in progress, if it has data, to u.
func (e *events) flush() {
	if e.has {
		var content bool
		if e.isCut {
			content = e.u.cut(e.head, e.data[max(0, len(e.data)-eventTailBytes):])
		} else {
			content = e.u.event(bytes.TrimSpace(e.data))
		}
		if content && e.tm != nil {
			e.tm.content()
		}
	}
	if e.buf != nil {
		if cap(e.data) <= maxPooledEvent {
			e.buf.b = e.data[:0]
			eventPool.Put(e.buf)
		}
		e.buf = nil
	}
	e.data, e.has, e.isCut = nil, false, false
}

// end ends the stream: its last event, if its blank line never came.
func (e *events) end() { e.flush() }

// readEvents gives each event of b, a whole event stream (or the tail of
// one), to u.
func readEvents(b []byte, u streamUsage) {
	e := newEvents(u)
	e.Write(b)
	e.end()
}

// isEventStream reports whether b, a body trimmed of spaces (whole, or
// its tail), is a server-sent event stream: it starts with a data or
// event field or a comment (": keep-alive", which a server or a proxy
// may send first), or, cut, holds a data line.
func isEventStream(b []byte, whole bool) bool {
	return bytes.HasPrefix(b, []byte("data:")) || bytes.HasPrefix(b, []byte("event:")) || bytes.HasPrefix(b, []byte(":")) ||
		!whole && bytes.Contains(b, []byte("\ndata:"))
}

// startsEventStream tells from the start of a body (its first bytes,
// white space before them passed over) whether it is an event stream, as
// isEventStream does from the whole body; decided is false while more
// bytes could change the answer.
func startsEventStream(start []byte, atEnd bool) (stream, decided bool) {
	s := bytes.TrimLeftFunc(start, unicode.IsSpace)
	if !atEnd && (len(s) == 0 || !utf8.FullRune(s)) {
		return false, false
	}
	for _, field := range []string{"data:", "event:"} {
		if !atEnd && len(s) < len(field) && field[:len(s)] == string(s) {
			return false, false
		}
	}
	return isEventStream(bytes.TrimSpace(s), true), true
}

// streamBody reads a streamed answer: as its events come when it is an
// event stream (told from its first bytes), else into a bodyTail as any
// other answer is, for its JSON.
type streamBody struct {
	usage   streamUsage
	newTail func() bodyTail
	start   []byte    // the first bytes, while it is not told
	events  *events   // an event stream's, once told
	tail    *bodyTail // another body's, once told
	n       int64     // bytes read
	timing  streamTiming
	peek    [streamPeek]byte
}

// streamPeek is the room an open stream waits for its next bytes in; what
// comes with them is read at once into a pooled room of streamRead bytes
// (readRooms). The connection's buffer (or the HTTP/2 stream's) holds
// them, so the second read makes no system call; an open stream no
// longer holds a 512-byte room of its own while it waits
// (bench/README.md, memory per open stream).
const streamPeek = 24 // the streamBody 256 bytes, an allocator size class (with 32: 264, allocated as 288)

var readRooms = sync.Pool{New: func() any { return new([streamRead]byte) }}

// readFrom reads r to its end, or to MaxBodyBytes and one byte more,
// as through io.LimitReader (whose 16 bytes an open stream then held).
// The bound is kept here, not in a function of its own: a frame more
// under the read is on the stack of every open stream
// (TestOpenStreamStack, internal/campaign).
func (s *streamBody) readFrom(r io.Reader) error {
	for {
		var n int
		err := io.EOF
		if k := s.left(len(s.peek)); k > 0 {
			n, err = r.Read(s.peek[:k])
		}
		if n > 0 {
			s.timing.newRead()
			s.write(s.peek[:n])
		}
		if n == len(s.peek) && err == nil {
			room := readRooms.Get().(*[streamRead]byte)
			n, err = 0, io.EOF
			if k := s.left(streamRead); k > 0 {
				n, err = r.Read(room[:k])
			}
			if n > 0 {
				s.timing.newRead() // this read may have waited
				s.write(room[:n])
			}
			readRooms.Put(room)
		}
		if err == io.EOF {
			s.end()
			return nil
		}
		if err != nil {
			return err
		}
	}
}

// left is how many of want bytes the body may still read: up to
// MaxBodyBytes+1 in all.
func (s *streamBody) left(want int) int {
	return int(min(int64(want), MaxBodyBytes+1-s.n))
}

// write takes the body's next bytes.
func (s *streamBody) write(p []byte) {
	s.n += int64(len(p))
	switch {
	case s.events != nil:
		s.events.Write(p)
	case s.tail != nil:
		s.tail.Write(p)
	default:
		s.tell(p, false)
	}
}

// tell adds p to the body's first bytes and, once they tell what the body
// is (atEnd: the body has ended), reads them as such. White space before
// them is dropped as it comes (a body of white space sent a byte at a
// time must not cost its square).
func (s *streamBody) tell(p []byte, atEnd bool) {
	s.start = bytes.TrimLeftFunc(append(s.start, p...), unicode.IsSpace)
	stream, told := startsEventStream(s.start, atEnd)
	if !told {
		return
	}
	if stream {
		s.events = newEvents(s.usage)
		s.events.tm = &s.timing
		s.events.Write(s.start)
	} else {
		t := s.newTail()
		s.tail = &t
		s.tail.Write(s.start)
	}
	s.start = nil
}

// end ends the body.
func (s *streamBody) end() {
	if s.events == nil && s.tail == nil {
		s.tell(nil, true)
	}
	if s.events != nil {
		s.events.end()
	}
}
