package client

import (
	"net/url"
	"strings"

	"github.com/ptuprobe/ptuprobe/internal/valid"
)

// azureDialect is Azure OpenAI's chat completions: POST
// {Endpoint}/openai/deployments/{Deployment}/chat/completions?api-version=…,
// the key in api-key (AZURE_OPENAI_API_KEY) or an Entra token as Bearer
// (AZURE_OPENAI_AD_TOKEN); body and usage are OpenAI's.
type azureDialect struct{ chatDialect }

func (azureDialect) url(cfg *Config) (string, error) {
	if cfg.Endpoint == "" {
		return "", valid.Errorf("Endpoint", "is required for {API} azure")
	}
	if cfg.Deployment == "" {
		return "", valid.Errorf("Deployment", "is required for {API} azure")
	}
	base, err := checkURL("Endpoint", cfg.Endpoint)
	if err != nil {
		return "", err
	}
	if cfg.APIVersion == "" {
		cfg.APIVersion = DefaultAPIVersion
	}
	base.Path = strings.TrimRight(base.Path, "/") + "/openai/deployments/" + url.PathEscape(cfg.Deployment) + "/chat/completions"
	base.RawQuery = "api-version=" + url.QueryEscape(cfg.APIVersion)
	return base.String(), nil
}

func (azureDialect) keys(string) []keyVar {
	return []keyVar{{envAzureKey, "api-key"}, {envAzureADToken, "Authorization"}}
}
