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
		{"out of file descriptors", nil, dialError("socket", syscall.EMFILE), results.ErrLocal},
		{"system file table full", nil, dialError("socket", syscall.ENFILE), results.ErrLocal},
		{"out of local ports", nil, dialError("connect", syscall.EADDRNOTAVAIL), results.ErrLocal},
		{"no buffer space", nil, dialError("connect", syscall.ENOBUFS), results.ErrLocal},
		{"out of memory in socket", nil, dialError("socket", syscall.ENOMEM), results.ErrLocal},
		{"local, inside a url.Error", nil, &url.Error{Op: "Post", URL: "http://h", Err: dialError("socket", syscall.EMFILE)}, results.ErrLocal},
		// The resolver reports its own failures as text: a DNSError does
		// not wrap the errno.
		{"out of file descriptors while resolving", nil, &net.DNSError{Err: "dial udp 127.0.0.53:53: socket: too many open files", Name: "h"}, results.ErrLocal},
		{"refused", nil, dialError("connect", syscall.ECONNREFUSED), results.ErrRefused},
		{"reset", nil, &net.OpError{Op: "read", Net: "tcp", Err: os.NewSyscallError("read", syscall.ECONNRESET)}, results.ErrReset},
		{"broken pipe", nil, &net.OpError{Op: "write", Net: "tcp", Err: os.NewSyscallError("write", syscall.EPIPE)}, results.ErrReset},
		{"unexpected EOF", nil, fmt.Errorf("read body: %w", io.ErrUnexpectedEOF), results.ErrReset},
		{"deadline", nil, &url.Error{Op: "Post", URL: "http://h", Err: context.DeadlineExceeded}, results.ErrTimeout},
		{"canceled context", canceled, errors.New("anything"), results.ErrCanceled},
		{"canceled beats local", canceled, dialError("socket", syscall.EMFILE), results.ErrCanceled},
		{"headers over the limit", nil, &url.Error{Op: "Post", URL: "http://h", Err: errors.New("net/http: server response headers exceeded 65536 bytes; aborted")}, results.ErrHeaders},
		{"http2 header list over the limit", nil, errors.New("stream error: http2: response header list larger than advertised limit"), results.ErrHeaders},
		// A garbage status line is quoted in net/http's error: what it
		// says must not choose the class.
		{"garbage that reads like a class", nil, &url.Error{Op: "Post", URL: "http://h", Err: fmt.Errorf("net/http: HTTP/1.x transport connection broken: %w",
			errors.New(`malformed HTTP response "net/http: server response headers exceeded 1 bytes; tls: too many open files"`))}, results.ErrOther},
		{"tls alert", nil, tls.AlertError(40), results.ErrTLS},
		{"unknown", nil, errors.New("malformed HTTP response"), results.ErrOther},
		{"another errno", nil, dialError("connect", syscall.EHOSTUNREACH), results.ErrOther},
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
			if r := send(tg); r.Error != results.ErrLocal || r.Status != 0 {
				t.Fatalf("row %+v, want error %s", r, results.ErrLocal)
			}
		})
	}
}
