package cmd

import (
	"fmt"
	"io"

	"github.com/spf13/pflag"

	"github.com/ptuprobe/ptuprobe/client"
)

// tlsFlags are the flags that say which certificates a target may show:
// --ca-cert (a private CA, a TLS-inspecting proxy's) and --insecure; and
// --http1, the protocol spoken over TLS.
type tlsFlags struct {
	caCert   string
	insecure bool
	http1    bool
}

func (f *tlsFlags) add(fs *pflag.FlagSet) {
	fs.StringVar(&f.caCert, "ca-cert", "", "PEM file of CA certificates to trust beside the system's, for a target signed by a private CA or behind a TLS-inspecting proxy")
	fs.BoolVar(&f.http1, "http1", false, "speak HTTP/1.1 to an https:// target, as the Python and Node SDKs do (ALPN http/1.1 only), where it would otherwise offer HTTP/2")
	fs.BoolVar(&f.insecure, "insecure", false, "do not verify the target's TLS certificate (a warning on every run: anyone on the path can read and answer the requests, key included)")
}

// apply sets the TLS fields of s.
func (f *tlsFlags) apply(s client.Spec) client.Spec {
	s.CACert, s.Insecure, s.HTTP1 = f.caCert, f.insecure, f.http1
	return s
}

// warn says on stderr, on every run that skips verification, what it
// gives away.
func (f *tlsFlags) warn(stderr io.Writer) {
	if f.insecure {
		fmt.Fprintln(stderr, "ptuprobe: warning: --insecure: the target's TLS certificate is not verified; anyone on the path can read and answer these requests, the key included")
	}
}
