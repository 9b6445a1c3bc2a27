// Package redisserver starts a real redis-server for tests, on a loopback
// port, in a test's temporary directory, without persistence; a test
// skips, saying why, where redis-server is not installed (Debian's
// package redis-server; .ci/run installs it). Tests only.
package redisserver

import (
	"bufio"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"os"
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
	dir := t.TempDir()
	s := &Server{t: t}
	for try := 1; ; try++ {
		port := FreePort(t)
		s.Addr = net.JoinHostPort("127.0.0.1", strconv.Itoa(port))
		s.args = append([]string{bin, "--port", strconv.Itoa(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no",
			"--dir", dir, "--enable-debug-command", "yes", "--protected-mode", "no"}, extra...)
		err := s.start()
		if err == nil {
			break
		}
		// A port free when chosen may be bound by another process before
		// redis-server binds it (another test's server that chose the same
		// one): choose again, a few times.
		if se, ok := err.(*startError); !ok || !se.portTaken() || try == startTries {
			s.t.Fatal(err)
		}
		t.Logf("redis-server: port %d taken before it could bind it; another port", port)
	}
	t.Cleanup(s.Stop)
	return s
}

// startTries bounds the ports Start tries when another process binds the
// one chosen first.
const startTries = 5

// FreePort is a loopback port free now, chosen below the kernel's
// ephemeral range where there is room (Linux's ip_local_port_range,
// 32768-60999 by default): the kernel hands ports of that range to every
// other listener on port 0 and to every outgoing connection, so one given
// back there was taken, before redis-server could bind it, on a machine
// busy with loopback traffic (round 15: "Address already in use" in 1 of
// 13 runs of redisstate's tests under load 11, the machine holding 11,000
// connections in TIME_WAIT), and a port meant to be down answered as
// another test's HTTP server (1 of 83). Below the range, only a process that names
// the port itself can take it.
func FreePort(t testing.TB) int {
	t.Helper()
	lo := ephemeralLow()
	for range 100 {
		addr := "127.0.0.1:0"
		if lo > minPort+1000 {
			addr = "127.0.0.1:" + strconv.Itoa(minPort+rand.IntN(lo-minPort))
		}
		ln, err := net.Listen("tcp", addr)
		if err != nil {
			continue // in use: another
		}
		port := ln.Addr().(*net.TCPAddr).Port
		ln.Close()
		return port
	}
	t.Fatal("no free loopback port")
	return 0
}

// minPort is the least port FreePort chooses: above the well-known
// services' (Redis's own 6379 among them).
const minPort = 10000

// ephemeralLow is the first port of the kernel's ephemeral range, or 0
// where it cannot be read (not Linux).
func ephemeralLow() int {
	b, err := os.ReadFile("/proc/sys/net/ipv4/ip_local_port_range")
	if err != nil {
		return 0
	}
	f := strings.Fields(string(b))
	if len(f) != 2 {
		return 0
	}
	lo, err := strconv.Atoi(f[0])
	if err != nil {
		return 0
	}
	return lo
}

// Restart starts the server again, on its port, after Stop, and returns
// once it accepts connections.
func (s *Server) Restart() {
	s.t.Helper()
	if err := s.start(); err != nil {
		s.t.Fatal(err)
	}
}

// start starts redis-server with s.args and waits until it accepts
// connections, or says why it did not start.
func (s *Server) start() error {
	cmd := exec.Command(s.args[0], s.args[1:]...)
	out, err := cmd.StdoutPipe()
	if err != nil {
		return err
	}
	if err := cmd.Start(); err != nil {
		return err
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
			s.Stop()
		}
		return err
	case <-time.After(readyTimeout):
		s.Stop()
		return fmt.Errorf("redis-server on %s was not ready within %v", s.Addr, readyTimeout)
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

// portTaken reports whether redis-server could not bind its port.
func (e *startError) portTaken() bool { return strings.Contains(e.log, "Address already in use") }
