package client

import (
	"net/http"

	"github.com/ptuprobe/ptuprobe/internal/valid"
)

// rawDialect is any request: Config.Method, Body and Headers to URL as
// given, no key of its own (Config.KeyHeader carries one, Authorization
// by default); its answer is read as a chat completion's. It builds no
// body, so its frame and line are never asked for.
type rawDialect struct{ chatDialect }

func (rawDialect) url(cfg *Config) (string, error) {
	if cfg.URL == "" {
		return "", valid.Errorf("URL", "is required for {API} %s", APIRaw)
	}
	u, err := checkURL("URL", cfg.URL)
	if err != nil {
		return "", err
	}
	if cfg.Method == "" {
		cfg.Method = http.MethodPost
		if cfg.Body == nil {
			cfg.Method = http.MethodGet
		}
	}
	if !isToken(cfg.Method) {
		return "", valid.Errorf("Method", "must be an HTTP method such as GET or POST")
	}
	return u.String(), nil
}

// overhead: a raw body is the user's own, counted by no rule.
func (rawDialect) overhead(int) int     { return 0 }
func (rawDialect) keys(string) []keyVar { return nil }
