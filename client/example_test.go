package client_test

import (
	"errors"
	"fmt"
	"time"

	"github.com/ptuprobe/ptuprobe/client"
	"github.com/ptuprobe/ptuprobe/internal/valid"
)

// Resolve reads the key through the getenv it is given: here a map, so
// nothing touches the process environment. With no api key but an Entra
// token, azure sends the token as a Bearer token.
func ExampleResolve() {
	env := map[string]string{"AZURE_OPENAI_AD_TOKEN": "token"}
	cfg, err := client.Resolve(client.Spec{
		Endpoint: "https://example.openai.azure.com", Deployment: "gpt-4o",
		PromptTokens: 1000, MaxTokens: 100, Timeout: time.Minute,
	}, func(name string) string { return env[name] })
	fmt.Println(cfg.API, cfg.KeyHeader, err)

	_, err = client.Resolve(client.Spec{URL: "https://example.com/v1", APIKeyEnv: "UNSET", Timeout: time.Minute},
		func(string) string { return "" })
	var ve *valid.Error
	if errors.As(err, &ve) {
		fmt.Println(ve.Field(), "|", ve)
	}
	// Output:
	// azure Authorization <nil>
	// APIKeyEnv | APIKeyEnv names an environment variable that is empty or unset
}

// A Gemini key is sent in the x-goog-api-key header, never in the URL: a
// URL that carries one is refused, in words that do not repeat it.
func ExampleNew_geminiKeyInURL() {
	cfg, err := client.Resolve(client.Spec{
		API: client.APIGemini, URL: "https://generativelanguage.googleapis.com/?key=AIza-not-here",
		Model: "gemini-2.5-flash", PromptTokens: 1000, MaxTokens: 100, Timeout: time.Minute,
	}, func(name string) string { return map[string]string{"GEMINI_API_KEY": "a-key"}[name] })
	if err == nil {
		_, err = client.New(cfg)
	}
	fmt.Println(err)
	// Output:
	// URL must not carry a key in its query (key=): the key is read from the environment and sent in the x-goog-api-key header, never in a URL
}
