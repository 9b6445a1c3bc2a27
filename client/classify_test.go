package client

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"net"
	"net/url"
	"os"
	"syscall"
	"testing"

	"github.com/ptuprobe/ptuprobe/results"
)

// dialError is what net.Dialer returns when a system call fails: the
// errno inside an *os.SyscallError inside a *net.OpError, which
// http.Client wraps again in a *url.Error.
func dialError(call string, errno syscall.Errno) error {
	return &net.OpError{Op: "dial", Net: "tcp", Err: os.NewSyscallError(call, errno)}
}

func TestClassify(t *testing.T) {
	t.Parallel()
	canceled, cancel := context.WithCancel(context.Background())
	cancel()
	tests := []struct {
		name string
		ctx  context.Context
		err  error
		want string
	}{
		{"nil", nil, nil, ""},
		{"out of file descriptors", nil, dialError("socket", syscall.EMFILE), results.ClassLocal},
		{"system file table full", nil, dialError("socket", syscall.ENFILE), results.ClassLocal},
		{"out of local ports", nil, dialError("connect", syscall.EADDRNOTAVAIL), results.ClassLocal},
		{"no buffer space", nil, dialError("connect", syscall.ENOBUFS), results.ClassLocal},
		{"out of memory in socket", nil, dialError("socket", syscall.ENOMEM), results.ClassLocal},
		{"local, inside a url.Error", nil, &url.Error{Op: "Post", URL: "http://h", Err: dialError("socket", syscall.EMFILE)}, results.ClassLocal},
		// The resolver reports its own failures as text: a DNSError does
		// not wrap the errno.
		{"out of file descriptors while resolving", nil, &net.DNSError{Err: "dial udp 127.0.0.53:53: socket: too many open files", Name: "h"}, results.ClassLocal},
		{"refused", nil, dialError("connect", syscall.ECONNREFUSED), results.ClassRefused},
		{"reset", nil, &net.OpError{Op: "read", Net: "tcp", Err: os.NewSyscallError("read", syscall.ECONNRESET)}, results.ClassReset},
		{"broken pipe", nil, &net.OpError{Op: "write", Net: "tcp", Err: os.NewSyscallError("write", syscall.EPIPE)}, results.ClassReset},
		{"unexpected EOF", nil, fmt.Errorf("read body: %w", io.ErrUnexpectedEOF), results.ClassReset},
		{"deadline", nil, &url.Error{Op: "Post", URL: "http://h", Err: context.DeadlineExceeded}, results.ClassTimeout},
		{"canceled context", canceled, errors.New("anything"), results.ClassCanceled},
		{"canceled beats local", canceled, dialError("socket", syscall.EMFILE), results.ClassCanceled},
		{"headers over the limit", nil, &url.Error{Op: "Post", URL: "http://h", Err: errors.New("net/http: server response headers exceeded 65536 bytes; aborted")}, results.ClassHeaders},
		{"http2 header list over the limit", nil, errors.New("stream error: http2: response header list larger than advertised limit"), results.ClassHeaders},
		// A garbage status line is quoted in net/http's error: what it
		// says must not choose the class.
		{"garbage that reads like a class", nil, &url.Error{Op: "Post", URL: "http://h", Err: fmt.Errorf("net/http: HTTP/1.x transport connection broken: %w",
			errors.New(`malformed HTTP response "net/http: server response headers exceeded 1 bytes; tls: too many open files"`))}, results.ClassOther},
		{"tls alert", nil, tls.AlertError(40), results.ClassTLS},
		{"unknown", nil, errors.New("malformed HTTP response"), results.ClassOther},
		{"another errno", nil, dialError("connect", syscall.EHOSTUNREACH), results.ClassOther},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			ctx := tt.ctx
			if ctx == nil {
				ctx = context.Background()
			}
			if got := Classify(ctx, tt.err); got != tt.want {
				t.Fatalf("Classify(%v) = %q, want %q", tt.err, got, tt.want)
			}
		})
	}
}

// TestLocalDialFailureIsLocal: a dialer that fails for want of a file
// descriptor or a local port gives rows of class "local", not a target
// error.
func TestLocalDialFailureIsLocal(t *testing.T) {
	t.Parallel()
	for _, errno := range []syscall.Errno{syscall.EMFILE, syscall.ENFILE, syscall.EADDRNOTAVAIL, syscall.ENOBUFS} {
		t.Run(errno.Error(), func(t *testing.T) {
			t.Parallel()
			tg, err := New(Config{API: APIOpenAI, URL: "http://127.0.0.1:9/v1/chat/completions", PromptTokens: 10, MaxTokens: 1,
				DialContext: func(context.Context, string, string) (net.Conn, error) { return nil, dialError("socket", errno) }})
			if err != nil {
				t.Fatal(err)
			}
			defer tg.Close()
			if r := send(tg); r.Error != results.ClassLocal || r.Status != 0 {
				t.Fatalf("row %+v, want error %s", r, results.ClassLocal)
			}
		})
	}
}
