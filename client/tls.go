package client

import (
	"crypto/tls"
	"crypto/x509"
	"encoding/pem"
	"errors"
	"io"
	"io/fs"
	"os"
	"strings"

	"github.com/ptuprobe/ptuprobe/internal/valid"
)

// MaxCACertBytes bounds a CA certificate file: 1 MiB holds hundreds of
// PEM certificates (a system bundle is about 200 KiB).
const MaxCACertBytes = 1 << 20

// readCACert reads the PEM certificates of the regular file name into a
// pool beside the system's roots (an empty pool where the system has
// none): a private CA, or a TLS-inspecting proxy's, is then trusted for
// the targets it signs, the public CAs for the rest. A file that cannot
// be read or holds no PEM certificate is a *valid.Error on CACert; the
// path stays out of it, as it does of a body file's.
func readCACert(name string) (*x509.CertPool, error) {
	b, err := readCAFile(name)
	if err != nil {
		return nil, err
	}
	pool, err := x509.SystemCertPool()
	if err != nil || pool == nil {
		pool = x509.NewCertPool()
	}
	if !hasPEMCertificate(b) || !pool.AppendCertsFromPEM(b) {
		return nil, valid.Errorf("CACert", "names a file that holds no PEM certificate (-----BEGIN CERTIFICATE-----)")
	}
	return pool, nil
}

// readCAFile reads a regular file of at most MaxCACertBytes.
func readCAFile(name string) ([]byte, error) {
	fi, err := os.Stat(name)
	if err != nil {
		return nil, caFileError(err)
	}
	if kind := fileKind(fi.Mode()); kind != "" {
		return nil, valid.Errorf("CACert", "must name a regular file, not %s", kind)
	}
	f, err := os.Open(name)
	if err != nil {
		return nil, caFileError(err)
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, MaxCACertBytes+1))
	if err != nil {
		return nil, caFileError(err)
	}
	if len(b) > MaxCACertBytes {
		return nil, valid.Errorf("CACert", "names a file larger than %d MiB", MaxCACertBytes>>20)
	}
	return b, nil
}

// hasPEMCertificate reports whether b holds a PEM block of type
// CERTIFICATE: AppendCertsFromPEM alone would accept a bundle of which
// one certificate parses among blocks of other kinds.
func hasPEMCertificate(b []byte) bool {
	for {
		var block *pem.Block
		block, b = pem.Decode(b)
		if block == nil {
			return false
		}
		if block.Type == "CERTIFICATE" {
			return true
		}
	}
}

func caFileError(err error) error {
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return valid.Errorf("CACert", "names a file that does not exist")
	case errors.Is(err, fs.ErrPermission):
		return valid.Errorf("CACert", "names a file that cannot be read: permission denied")
	}
	var pe *fs.PathError
	if errors.As(err, &pe) {
		err = pe.Err
	}
	return valid.Errorf("CACert", "names a file that cannot be read: %s", strings.NewReplacer("{", "(", "}", ")").Replace(err.Error()))
}

// tlsConfig is the TLS configuration cfg asks for, or nil for Go's
// default (the system's roots, verified).
func (cfg *Config) tlsConfig() *tls.Config {
	if cfg.RootCAs == nil && !cfg.InsecureSkipVerify {
		return nil
	}
	return &tls.Config{
		RootCAs: cfg.RootCAs,
		// Asked for by name (--insecure): the caller warns on every run.
		InsecureSkipVerify: cfg.InsecureSkipVerify,
		MinVersion:         tls.VersionTLS12,
	}
}
