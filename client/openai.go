package client

import "github.com/ptuprobe/ptuprobe/internal/valid"

// openAIDialect is OpenAI's chat completions: POST {URL}, the key as
// Bearer (OPENAI_API_KEY), the model in the body (DefaultModel unless
// Config.Model names one).
type openAIDialect struct{ chatDialect }

func (openAIDialect) url(cfg *Config) (string, error) {
	if cfg.URL == "" {
		return "", valid.Errorf("URL", "is required for {API} %s", APIOpenAI)
	}
	u, err := checkURL("URL", cfg.URL)
	if err != nil {
		return "", err
	}
	if cfg.Model == "" {
		cfg.Model = DefaultModel
	}
	return u.String(), nil
}

func (openAIDialect) keys(string) []keyVar {
	return []keyVar{{envOpenAIKey, "Authorization"}}
}
