package referee

import (
	"bytes"
	"slices"
	"strings"
	"testing"

	"github.com/ptuprobe/ptuprobe/sim"
)

// leakedSecrets are the throwaway secrets of issue 35 that reached the
// graded command, one or more of each kind: connection strings by their
// AccountKey= and SharedAccessKey=, Azure Functions' storage, *_PASS, a
// CI job's JWT, *_PAT, *_CREDS, webhook URLs, a token as a URL's user,
// secrets in a URL's query, jdbc: URLs and an ODBC Pwd=. (All made up.)
var leakedSecrets = map[string]string{
	"STORAGE_CONNECTION_STRING":    "DefaultEndpointsProtocol=https;AccountName=acme;AccountKey=c2VjcmV0c2VjcmV0c2VjcmV0;EndpointSuffix=core.windows.net",
	"SERVICEBUS_CONNECTION_STRING": "Endpoint=sb://acme.servicebus.windows.net/;SharedAccessKeyName=Root;SharedAccessKey=c2VjcmV0c2VjcmV0",
	"AzureWebJobsStorage":          "DefaultEndpointsProtocol=https;AccountName=fn;AccountKey=Zm9vYmFyZm9vYmFy",
	"DB_PASS":                      "hunter2hunter2",
	"SMTP_PASS":                    "correct-horse",
	"CI_JOB_JWT":                   "eyJhbGciOiJSUzI1NiJ9.eyJzdWIiOiJqb2IifQ.c2lnbmF0dXJl",
	"CI_JOB_JWT_V2":                "eyJhbGciOiJSUzI1NiJ9.eyJzdWIiOiJqb2IyIn0.c2lnbmF0dXJl",
	"GITLAB_PAT":                   "glpat-abcdefghij0123456789",
	"AZDO_PAT":                     "n0tar3alpat",
	"DOCKER_CREDS":                 "user:pass",
	"GCP_CREDS":                    "{\"type\":\"service_account\"}",
	"SLACK_URL":                    "https://hooks.slack.com/services/T0000/B0000/XXXXXXXXXXXX",
	"DISCORD_HOOK":                 "https://discord.com/api/webhooks/123456/abcdefABCDEF",
	"TEAMS_NOTIFY":                 "https://acme.webhook.office.com/webhookb2/0000-1111@2222/IncomingWebhook/3333/4444",
	"GIT_REMOTE":                   "https://ghp0123456789abcdef@github.com/acme/repo.git",
	"SENTRY_ENDPOINT":              "https://0123456789abcdef@o1.ingest.sentry.io/2",
	"REPORT_URL":                   "https://reports.example.com/upload?user=ci&password=hunter2",
	"BLOB_URL":                     "https://acme.blob.core.windows.net/c/f?sv=2022-11-02&sp=r&sig=c2lnbmF0dXJl",
	"FUNCTION_URL":                 "https://acme.azurewebsites.net/api/f?code=Zm9vYmFyZm9vYmFy",
	"MAPS_URL":                     "https://maps.example.com/v1?key=AIzaFakeFakeFake",
	"CALLBACK_URL":                 "https://example.com/cb?access_token=abc123",
	"JDBC_URL":                     "jdbc:postgresql://db:5432/app?user=app&password=hunter2",
	"MSSQL_URL":                    "jdbc:sqlserver://db:1433;databaseName=app;user=app;password=hunter2",
	"MYSQL_URL":                    "jdbc:mysql://app:hunter2@db:3306/app",
	"ODBC_DSN_STRING":              "Driver={ODBC Driver 18 for SQL Server};Server=db;Uid=app;Pwd=hunter2;",
}

// valueOnlySecrets are credentials under bland names: only their values
// tell.
var valueOnlySecrets = map[string]string{
	"FOO":     "https://u:p@h",
	"BAR":     "eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.SflKxwRJSMeKKF2QT4fwpMeJf36POk6yJV_adQssw5c",
	"BAZ":     "https://example.com/hook?secret=s3cr3t",
	"QUX":     "ghp_0123456789abcdefghijABCDEFGHIJ012345",
	"NEWER":   "github_pat_11ABCDEFG0123456789_abcdefghijklmnopqrstuvwxyz0123456789",
	"CHAT":    "xoxb-1234567890-0987654321-abcdefABCDEF",
	"LLM":     "sk-proj-abcdefghij0123456789ABCDEFGHIJ",
	"HEADERS": "Authorization: Bearer abcdefghij0123456789",
	"PEM":     "-----BEGIN RSA PRIVATE KEY-----\nMIIE…\n-----END RSA PRIVATE KEY-----",
	"CONN":    "Server=db;User Id=app;Password=hunter2;",
	"REDIS":   "redis://:hunter2@cache:6379/0,redis://:hunter2@cache2:6379/0",
}

// ordinaryEnv are variables that are no credential and must pass.
var ordinaryEnv = map[string]string{
	"PATH": "/usr/local/go/bin:/usr/bin:/bin", "HOME": "/home/u", "GOPATH": "/home/u/go", "GOFLAGS": "-mod=mod",
	"NODE_OPTIONS": "--max-old-space-size=4096", "LANG": "sk_SK.UTF-8", "TERM": "xterm-256color", "PWD": "/work",
	"SHELL": "/bin/bash", "USER": "u", "HTTP_PROXY": "http://proxy:3128", "NO_PROXY_EXTRA": "localhost",
	"GIT_AUTHOR_NAME": "A Person", "GIT_AUTHOR_EMAIL": "a@example.com", "SSL_CERT_FILE": "/etc/ssl/cert.pem",
	"GITHUB_SHA": "0123456789abcdef0123456789abcdef01234567", "GITHUB_SERVER_URL": "https://github.com",
	"GITHUB_REPOSITORY": "acme/app", "TOX_TESTENV_PASSENV": "HOME", "HF_HOME": "/home/u/hf_cache_directory_2024",
	"LS_COLORS": "rs=0:di=01;34:ln=01;36:mh=00:pi=40;33:so=01;35:*.tar=01;31",
	"REPO":      "ssh://git@github.com/acme/app.git", "INVOCATION_ID": "0123456789abcdef0123456789abcdef",
	"NPM_CONFIG_REGISTRY": "https://registry.npmjs.org/", "PS1": "\\u@\\h:\\w\\$ ", "KUBE_NAMESPACE": "default",
	"DOCS": "see Basic authentication and Bearer tokens", "NODE_ENV": "production", "PATH_EXTRA": "/opt/hf_models",
}

// TestCredentialsAreWithheld: each of issue 35's throwaway secrets that
// reached the command, and a credential under a bland name, is withheld;
// ordinary variables pass.
func TestCredentialsAreWithheld(t *testing.T) {
	t.Parallel()
	for _, set := range []map[string]string{leakedSecrets, valueOnlySecrets} {
		for name, value := range set {
			if !credentialLike(name, value) {
				t.Errorf("%s is passed to the command", name)
			}
		}
	}
	for name, value := range valueOnlySecrets {
		if credentialName(name) {
			t.Errorf("%s: a bland name reads as a credential's: the case tests nothing", name)
		}
		if !credentialValue(value) {
			t.Errorf("%s: its value is not found credential-like", name)
		}
	}
	for name, value := range ordinaryEnv {
		if credentialLike(name, value) {
			t.Errorf("%s=%s is withheld", name, value)
		}
	}
}

// TestWithheldAreNamed: the user is told on stderr which variables the
// command was not given, by name and never by value, and which of the
// referee's own the dialect leaves unset; the verdict counts them.
func TestWithheldAreNamed(t *testing.T) {
	t.Parallel()
	base := []string{"PORTKEY_DIR=https://u:p@portkey.example", "PATH=/bin", "OPENAI_BASE_URL=https://REAL.example/v1", "DB_PASS=hunter2"}
	_, withheld, unset := commandEnv(base, refereeEnv(sim.DialectAzure, "http://127.0.0.1:1", "k", "r"), nil)
	if !slices.Equal(withheld, []string{"DB_PASS", "PORTKEY_DIR"}) || !slices.Equal(unset, []string{"OPENAI_BASE_URL"}) {
		t.Fatalf("withheld %v, unset %v", withheld, unset)
	}
	var b bytes.Buffer
	noteEnv(&b, sim.DialectAzure, withheld, unset)
	out := b.String()
	if !strings.Contains(out, "DB_PASS, PORTKEY_DIR") || !strings.Contains(out, "--pass-env") || !strings.Contains(out, "OPENAI_BASE_URL") || strings.Contains(out, "hunter2") || strings.Contains(out, "u:p") || strings.Contains(out, "REAL") {
		t.Errorf("stderr: %q", out)
	}
	env, withheld, _ := commandEnv(base, refereeEnv(sim.DialectOpenAI, "http://127.0.0.1:1", "k", "r"), []string{"PORTKEY_DIR"})
	if !slices.Equal(withheld, []string{"DB_PASS"}) || !slices.Contains(env, "PORTKEY_DIR=https://u:p@portkey.example") || !slices.Contains(env, "OPENAI_BASE_URL=http://127.0.0.1:1/v1") {
		t.Errorf("--pass-env PORTKEY_DIR: withheld %v, env %v", withheld, env)
	}
}

// FuzzCredentialValue: the value checks never panic, and a space after a
// value (a field's end) does not change what it is.
func FuzzCredentialValue(f *testing.F) {
	for _, set := range []map[string]string{leakedSecrets, valueOnlySecrets, ordinaryEnv} {
		for _, v := range set {
			f.Add(v)
		}
	}
	f.Fuzz(func(t *testing.T, v string) {
		got := credentialValue(v)
		if len(v) >= 8 && credentialValue(v+" ") != got {
			t.Errorf("%q: %v, and %v with a space after it", v, got, !got)
		}
	})
}
