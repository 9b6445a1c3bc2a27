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
