package redisserver

import (
	"bufio"
	"io"
	"net"
	"strconv"
	"strings"
	"sync"
	"testing"
)

// Fake is a server on a loopback port that speaks just enough RESP to
// play a Redis that misbehaves: it reads each command a client sends (an
// array of bulk strings) and lets Answer write what it likes back.
type Fake struct {
	Addr string

	ln    net.Listener
	mu    sync.Mutex
	conns map[net.Conn]bool
	wg    sync.WaitGroup
}

// Answer writes the answer to cmd (its words, the name upper-cased) to w,
// as raw bytes; it may write nothing (a server that stays silent) or
// return an error to close the connection.
type Answer func(cmd []string, w io.Writer) error

// maxCommand bounds what Fake reads of one command: its words and their
// bytes (a client's scripts are a few KB).
const maxCommand = 1 << 20

// StartFake serves answer on a free loopback port until the test ends.
func StartFake(t testing.TB, answer Answer) *Fake {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	f := &Fake{Addr: ln.Addr().String(), ln: ln, conns: map[net.Conn]bool{}}
	f.wg.Add(1)
	go f.accept(answer)
	t.Cleanup(f.Close)
	return f
}

func (f *Fake) accept(answer Answer) {
	defer f.wg.Done()
	for {
		conn, err := f.ln.Accept()
		if err != nil {
			return
		}
		f.mu.Lock()
		f.conns[conn] = true
		f.mu.Unlock()
		f.wg.Add(1)
		go func() {
			defer f.wg.Done()
			defer conn.Close()
			r := bufio.NewReader(conn)
			for {
				cmd, err := readCommand(r)
				if err != nil || answer(cmd, conn) != nil {
					return
				}
			}
		}()
	}
}

// Close stops the server and closes every connection it accepted.
func (f *Fake) Close() {
	f.ln.Close()
	f.mu.Lock()
	for c := range f.conns {
		c.Close()
	}
	f.mu.Unlock()
	f.wg.Wait()
}

// readCommand reads one command: *N then N bulk strings, within maxCommand.
func readCommand(r *bufio.Reader) ([]string, error) {
	n, err := readHeader(r, '*')
	if err != nil {
		return nil, err
	}
	cmd := make([]string, 0, min(n, 64))
	size := 0
	for range n {
		l, err := readHeader(r, '$')
		if size += l; err != nil || size > maxCommand {
			return nil, io.ErrUnexpectedEOF
		}
		b := make([]byte, l+2)
		if _, err := io.ReadFull(r, b); err != nil {
			return nil, err
		}
		cmd = append(cmd, string(b[:l]))
	}
	if len(cmd) > 0 {
		cmd[0] = strings.ToUpper(cmd[0])
	}
	return cmd, nil
}

func readHeader(r *bufio.Reader, kind byte) (int, error) {
	line, err := r.ReadSlice('\n')
	if err != nil || len(line) < 4 || line[0] != kind {
		return 0, io.ErrUnexpectedEOF
	}
	n, err := strconv.Atoi(string(line[1 : len(line)-2]))
	if err != nil || n < 0 || n > maxCommand {
		return 0, io.ErrUnexpectedEOF
	}
	return n, nil
}

// Replies is an Answer that answers each command by its name from
// replies, raw RESP, and any other as a Redis that does not know it: a
// HELLO so answered makes go-redis speak RESP2, as to an old Redis.
func Replies(replies map[string]string) Answer {
	return func(cmd []string, w io.Writer) error {
		reply, ok := replies[cmd[0]]
		if !ok {
			reply = "-ERR unknown command\r\n"
		}
		_, err := io.WriteString(w, reply)
		return err
	}
}
