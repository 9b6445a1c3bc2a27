package cmd

import (
	"context"
	"encoding/pem"
	"io"
	"log"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestTLSFlags: against a loopback TLS server with its own certificate,
// schedule trusts it with --ca-cert (no warning), skips it with
// --insecure (a warning, every run), and records a tls error with
// neither (every request failing: --allow-failures exits 0); a CA file that cannot be read or is not PEM, or both flags,
// is one line and exit 2.
func TestTLSFlags(t *testing.T) {
	t.Parallel()
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("retry-after-ms", "7")
		w.WriteHeader(429)
	}))
	srv.Config.ErrorLog = log.New(io.Discard, "", 0) // the refused handshakes
	srv.StartTLS()
	t.Cleanup(srv.Close)
	dir := t.TempDir()
	ca := filepath.Join(dir, "ca.pem")
	os.WriteFile(ca, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: srv.Certificate().Raw}), 0o600)
	notPEM := filepath.Join(dir, "ca.txt")
	os.WriteFile(notPEM, []byte("not a certificate\n"), 0o600)
	run := func(t *testing.T, extra ...string) (int, string, []string) {
		out := filepath.Join(t.TempDir(), "results.csv")
		args := append([]string{"schedule", "--url", srv.URL + "/v1/chat/completions", "--rate", "20/s", "--duration", "150ms", "-o", out, "--quiet"}, extra...)
		code, _, stderr := runCLI(context.Background(), args...)
		var errs []string
		if code == 0 {
			for _, r := range readResults(t, out) {
				errs = append(errs, r.Error)
			}
		}
		return code, stderr, errs
	}
	for _, tt := range []struct {
		name    string
		flags   []string
		err     string // every row's error class
		warning bool
	}{
		{"--ca-cert", []string{"--ca-cert", ca}, "", false},
		{"--insecure", []string{"--insecure"}, "", true},
		{"neither", []string{"--allow-failures"}, "tls", false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			code, stderr, errs := run(t, tt.flags...)
			if code != 0 || len(errs) != 3 {
				t.Fatalf("exit %d, %d rows: %s", code, len(errs), stderr)
			}
			for _, e := range errs {
				if e != tt.err {
					t.Fatalf("row error %q, want %q", e, tt.err)
				}
			}
			if warned := strings.Contains(stderr, "warning: --insecure"); warned != tt.warning {
				t.Fatalf("warning %v, want %v: %q", warned, tt.warning, stderr)
			}
		})
	}
	for _, tt := range []struct {
		name  string
		flags []string
		says  string
	}{
		{"missing", []string{"--ca-cert", filepath.Join(dir, "nope.pem")}, "--ca-cert names a file that does not exist"},
		{"not PEM", []string{"--ca-cert", notPEM}, "--ca-cert names a file that holds no PEM certificate"},
		{"a directory", []string{"--ca-cert", dir}, "--ca-cert must name a regular file"},
		{"both", []string{"--ca-cert", ca, "--insecure"}, "--insecure cannot go with --ca-cert"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			code, stderr, _ := run(t, tt.flags...)
			lines := strings.Split(strings.TrimSpace(stderr), "\n")
			if code != 2 || !strings.Contains(stderr, tt.says) || len(lines) != 1 {
				t.Fatalf("exit %d, stderr %q; want exit 2 and one line saying %q", code, stderr, tt.says)
			}
		})
	}
}
