package client

import (
	"bytes"
	"context"
	"io"
	"net"
	"net/http"
	"testing"
)

// cannedServer is a loopback listener that answers every request whose
// header ends (a GET without a body) with answer, allocating nothing a
// request, so that a benchmark's allocs/op are the client's alone.
func cannedServer(b *testing.B, answer string) string {
	b.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { ln.Close() })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go serveCanned(c, []byte(answer))
		}
	}()
	return "http://" + ln.Addr().String() + "/"
}

func serveCanned(c net.Conn, answer []byte) {
	defer c.Close()
	end := []byte("\r\n\r\n")
	buf := make([]byte, 4096)
	have := 0
	for {
		n, err := c.Read(buf[have:])
		if err != nil {
			return
		}
		have += n
		for {
			i := bytes.Index(buf[:have], end)
			if i < 0 {
				break
			}
			if _, err := c.Write(answer); err != nil {
				return
			}
			have = copy(buf, buf[i+len(end):have])
		}
		if have == len(buf) {
			return
		}
	}
}

// BenchmarkH1Reuse is a round trip on a kept-alive connection (the pool's
// peek, alive, included), its body read to the end: allocs/op are those
// of one request of the client's (bench/README.md, round 15).
func BenchmarkH1Reuse(b *testing.B) {
	url := cannedServer(b, "HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok")
	tr := newH1Transport(plainDial((&net.Dialer{}).DialContext), 4)
	defer tr.CloseIdleConnections()
	req, err := http.NewRequestWithContext(context.Background(), "GET", url, nil)
	if err != nil {
		b.Fatal(err)
	}
	trip := func() {
		resp, err := tr.RoundTrip(req)
		if err != nil {
			b.Fatal(err)
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
	}
	trip()
	b.ReportAllocs()
	for b.Loop() {
		trip()
	}
	if tr.nIdle != 1 {
		b.Fatalf("%d idle connections, want the one reused", tr.nIdle)
	}
}

// BenchmarkH1Alive is the pool's peek at an idle connection alone.
func BenchmarkH1Alive(b *testing.B) {
	url := cannedServer(b, "HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok")
	tr := newH1Transport(plainDial((&net.Dialer{}).DialContext), 4)
	defer tr.CloseIdleConnections()
	req, _ := http.NewRequest("GET", url, nil)
	pc, err := tr.conn(context.Background(), canonicalAddr(req), true)
	if err != nil {
		b.Fatal(err)
	}
	defer pc.conn.Close()
	b.ReportAllocs()
	for b.Loop() {
		if !pc.alive() {
			b.Fatal("an open connection not alive")
		}
	}
}
