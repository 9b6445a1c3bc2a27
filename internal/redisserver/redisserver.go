// Package redisserver starts a real redis-server for tests, on a loopback
// port, in a test's temporary directory, without persistence; a test
// skips, saying why, where redis-server is not installed (Debian's
// package redis-server; .ci/run installs it). Tests only.
package redisserver

import (
	"bufio"
	"io"
	"net"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"
)

// Server is one redis-server process, which a test may stop and start
// again on the same port.
type Server struct {
	t    testing.TB
	Addr string // 127.0.0.1:PORT
	args []string
	cmd  *exec.Cmd
}

// readyTimeout bounds the wait for redis-server to say it is ready.
const readyTimeout = 10 * time.Second

// Start starts redis-server on a free loopback port with extra arguments
// (such as "--requirepass", "pw"), stopped when the test ends; it skips
// the test when redis-server is not on PATH.
func Start(t testing.TB, extra ...string) *Server {
	t.Helper()
	bin, err := exec.LookPath("redis-server")
	if err != nil {
		t.Skip("redis-server is not on PATH (install Debian's redis-server to run the tests against a real Redis)")
	}
	// redis-server needs an explicit port: take a free one from the
	// kernel and give it back.
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := ln.Addr().(*net.TCPAddr).Port
	ln.Close()
	s := &Server{t: t, Addr: net.JoinHostPort("127.0.0.1", strconv.Itoa(port))}
	s.args = append([]string{"--port", strconv.Itoa(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no",
		"--dir", t.TempDir(), "--enable-debug-command", "yes", "--protected-mode", "no"}, extra...)
	s.args = append([]string{bin}, s.args...)
	s.Restart()
	t.Cleanup(s.Stop)
	return s
}

// Restart starts the server again after Stop (a first start too), and
// returns once it accepts connections.
func (s *Server) Restart() {
	s.t.Helper()
	cmd := exec.Command(s.args[0], s.args[1:]...)
	out, err := cmd.StdoutPipe()
	if err != nil {
		s.t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		s.t.Fatal(err)
	}
	s.cmd = cmd
	ready := make(chan error, 1)
	go func() {
		sc := bufio.NewScanner(out)
		var log []string
		for sc.Scan() {
			log = append(log, sc.Text())
			if strings.Contains(sc.Text(), "Ready to accept connections") {
				ready <- nil
				io.Copy(io.Discard, out)
				return
			}
		}
		ready <- &startError{log: strings.Join(log, "\n")}
	}()
	select {
	case err := <-ready:
		if err != nil {
			s.t.Fatal(err)
		}
	case <-time.After(readyTimeout):
		s.Stop()
		s.t.Fatalf("redis-server on %s was not ready within %v", s.Addr, readyTimeout)
	}
}

// Stop kills the server (as a crash would) and waits for it to exit.
func (s *Server) Stop() {
	if s.cmd == nil {
		return
	}
	s.cmd.Process.Kill()
	s.cmd.Wait()
	s.cmd = nil
}

type startError struct{ log string }

func (e *startError) Error() string { return "redis-server did not start:\n" + e.log }
