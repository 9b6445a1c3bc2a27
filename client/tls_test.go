package client

import (
	"encoding/pem"
	"errors"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/ptuprobe/ptuprobe/internal/valid"
	"github.com/ptuprobe/ptuprobe/results"
)

// writeCert writes srv's certificate as PEM to a file and returns its path.
func writeCert(t *testing.T, srv *httptest.Server) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "ca.pem")
	b := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: srv.Certificate().Raw})
	if err := os.WriteFile(path, b, 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// TestTLSTrust: against a loopback TLS server with its own certificate, a
// request fails verification (error class tls) unless the certificate is
// named by CACert or verification is skipped by Insecure.
func TestTLSTrust(t *testing.T) {
	t.Parallel()
	srv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Write([]byte(`{"usage":{"prompt_tokens":3,"completion_tokens":4}}`))
	}))
	t.Cleanup(srv.Close) // after the parallel subtests
	ca := writeCert(t, srv)
	for _, tt := range []struct {
		name     string
		caCert   string
		insecure bool
		status   int
		err      string
	}{
		{"system roots", "", false, 0, results.ClassTLS},
		{"--ca-cert", ca, false, 200, ""},
		{"--insecure", "", true, 200, ""},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			cfg, err := Resolve(Spec{API: APIOpenAI, URL: srv.URL + "/v1/chat/completions", PromptTokens: 10, MaxTokens: 5,
				Timeout: 5 * time.Second, CACert: tt.caCert, Insecure: tt.insecure, KeyOptional: true}, func(string) string { return "" }) // a server that needs no key
			if err != nil {
				t.Fatal(err)
			}
			tg, err := New(cfg)
			if err != nil {
				t.Fatal(err)
			}
			defer tg.Close()
			r := send(tg)
			if r.Status != tt.status || r.Error != tt.err {
				t.Fatalf("status %d, error %q; want %d, %q", r.Status, r.Error, tt.status, tt.err)
			}
			if tt.status == 200 && (r.PromptTokens != 3 || r.CompletionTokens != 4) {
				t.Fatalf("usage %d/%d", r.PromptTokens, r.CompletionTokens)
			}
		})
	}
}

// TestCACertRefused: a CA file that cannot be read or holds no PEM
// certificate is one *valid.Error on CACert, without the path.
func TestCACertRefused(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	write := func(name, text string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(text), 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	key := write("key.pem", string(pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: []byte("not a key")})))
	for _, tt := range []struct {
		name, path, reason string
		insecure           bool
	}{
		{"missing", filepath.Join(dir, "nope.pem"), "does not exist", false},
		{"directory", dir, "a directory", false},
		{"not PEM", write("notes.txt", "hello\n"), "no PEM certificate", false},
		{"empty", write("empty.pem", ""), "no PEM certificate", false},
		{"a key, no certificate", key, "no PEM certificate", false},
		{"a broken certificate", write("bad.pem", string(pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: []byte("junk")}))), "no PEM certificate", false},
		{"with --insecure", key, "cannot go with", true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			_, err := Resolve(Spec{API: APIOpenAI, URL: "https://127.0.0.1:1/v1/chat/completions", PromptTokens: 10, MaxTokens: 5,
				Timeout: time.Second, CACert: tt.path, Insecure: tt.insecure}, func(string) string { return "" })
			var v *valid.Error
			if !errors.As(err, &v) || !strings.Contains(err.Error(), tt.reason) {
				t.Fatalf("error %v, want a setting error saying %q", err, tt.reason)
			}
			if want := map[bool]string{false: "CACert", true: "Insecure"}[tt.insecure]; v.Field() != want {
				t.Fatalf("error on %s, want %s", v.Field(), want)
			}
			if strings.Contains(err.Error(), dir) || strings.Contains(err.Error(), "\n") {
				t.Fatalf("error %q holds the path or more than one line", err)
			}
		})
	}
}
