package referee

import (
	"net/url"
	"slices"
	"strings"
)

// credentialWords are the parts of a variable's name that make it
// credential-like wherever they stand in it (AZURE_OPENAI_KEY,
// AWS_SECRET_ACCESS_KEY, GITHUB_TOKEN, REDIS_PASSWORD,
// GOOGLE_APPLICATION_CREDENTIALS, MYAPP_APIKEY, CI_JOB_JWT,
// SLACK_WEBHOOK_URL, STORAGE_CONNECTION_STRING…).
var credentialWords = []string{
	"KEY", "SECRET", "TOKEN", "PASSWORD", "PASSWD", "PASSPHRASE", "CREDENTIAL", "JWT", "WEBHOOK",
	"CONNECTION_STRING", "CONNECTIONSTRING", "COOKIE",
}

// credentialParts are the credential-like parts that count only as a
// whole part of the name between underscores, dots or dashes: AUTH
// (SSH_AUTH_SOCK, BASIC_AUTH, NPM_CONFIG__AUTH, but not GIT_AUTHOR_NAME),
// PWD (MYSQL_PWD, but not PWD, the working directory), PASS and PW
// (SMTP_PASS, DB_PW, but not TOX_TESTENV_PASSENV), PAT (a personal access
// token: GITLAB_PAT, not PATH), CREDS (DOCKER_CREDS), SAS (a shared
// access signature) and DSN (SENTRY_DSN, whose URL carries its key).
var credentialParts = []string{"AUTH", "PWD", "PASS", "PW", "PAT", "CREDS", "SAS", "DSN"}

// credentialNames are the cloud SDKs' and services' variables that hold
// or reach a credential, or name the real endpoint, under a name without
// a credential word: the Azure SDKs' managed identity (IDENTITY_ENDPOINT
// and IDENTITY_HEADER, MSI_ENDPOINT, IMDS_ENDPOINT), their certificate
// and user sign-in (AZURE_CLIENT_CERTIFICATE_PATH, AZURE_USERNAME),
// @ai-sdk/azure's AZURE_RESOURCE_NAME (the real resource's host), Azure
// Functions' storage connection string (AzureWebJobsStorage), the AWS
// SDKs' AWS_PROFILE (which credentials file entry to use), and
// Kubernetes' KUBECONFIG.
var credentialNames = []string{
	"IDENTITY_ENDPOINT", "IDENTITY_HEADER", "MSI_ENDPOINT", "IMDS_ENDPOINT",
	"AZURE_CLIENT_CERTIFICATE_PATH", "AZURE_USERNAME", "AZURE_RESOURCE_NAME", "AzureWebJobsStorage",
	"AWS_PROFILE", "AWS_DEFAULT_PROFILE", "KUBECONFIG",
}

// credentialLike reports whether a variable must not reach the command
// unless the user names it: by its name (credentialName) or by its value
// (credentialValue), whatever the name.
func credentialLike(name, value string) bool {
	return credentialName(name) || credentialValue(value)
}

// credentialName reports whether a name holds a credential word
// (credentialWords, credentialParts) or is a known credential variable
// of a cloud SDK (credentialNames).
func credentialName(name string) bool {
	n := strings.ToUpper(name)
	for _, w := range credentialWords {
		if strings.Contains(n, w) {
			return true
		}
	}
	parts := strings.FieldsFunc(n, func(r rune) bool { return r == '_' || r == '.' || r == '-' })
	for _, p := range credentialParts {
		if len(parts) > 1 && slices.Contains(parts, p) {
			return true
		}
	}
	return slices.ContainsFunc(credentialNames, func(c string) bool { return strings.EqualFold(c, n) })
}

// credentialValue reports whether a value carries a credential whatever
// its variable is called: a URL with a user or a password in it
// (https://TOKEN@host, postgres://u:p@db, jdbc:mysql://u:p@db), a URL
// whose query carries a secret (?password=, ?sig=, ?code=…) or a webhook
// URL (the URL is the credential), a connection string with a secret
// among its key=value pairs (AccountKey=, SharedAccessKey=, Pwd=…), a
// JWT (eyJ….….…), a token of a known issuer by its prefix (ghp_,
// github_pat_, glpat-, xoxb-, sk-…), an Authorization header's value
// (Bearer …, Basic …) or a PEM private key.
func credentialValue(value string) bool {
	if len(value) < 8 {
		return false
	}
	if strings.Contains(value, "PRIVATE KEY-----") || hasJWT(value) || hasPrefixedToken(value) || hasAuthScheme(value) {
		return true
	}
	if strings.Contains(value, "://") {
		for _, field := range strings.FieldsFunc(value, func(r rune) bool { return r == ',' || r == ' ' || r == '\t' || r == '\n' }) {
			if secretURL(field) {
				return true
			}
		}
	}
	return secretPairs(value)
}

// secretURL reports whether one URL (a jdbc: one too) carries a
// credential: userinfo (a user alone is a token in https://TOKEN@host;
// ssh://git@host's is not), a secret-bearing query parameter, or a
// webhook's path or host.
func secretURL(s string) bool {
	s = strings.TrimPrefix(strings.TrimSpace(s), "jdbc:")
	u, err := url.Parse(s)
	if err != nil || u.Host == "" {
		// jdbc:sqlserver://host;user=u;password=p and other URLs
		// url.Parse refuses still have their pairs read (secretPairs).
		return false
	}
	if u.User != nil {
		_, hasPassword := u.User.Password()
		scheme := strings.ToLower(u.Scheme)
		if hasPassword || (u.User.Username() != "" && scheme != "ssh" && scheme != "git" && !strings.HasPrefix(scheme, "git+")) {
			return true
		}
	}
	for name := range u.Query() {
		if secretParam(name) {
			return true
		}
	}
	host, path := strings.ToLower(u.Hostname()), strings.ToLower(u.EscapedPath())
	return strings.Contains(path, "webhook") || strings.HasPrefix(host, "hooks.") || strings.Contains(host, "webhook")
}

// secretParams are the names of a query's or a connection string's
// pairs that carry a secret, compared lower-cased without spaces, dashes
// and underscores: Azure Storage's AccountKey, Service Bus's
// SharedAccessKey, ODBC's Pwd, a SAS's sig, Azure Functions' code….
var secretParams = []string{
	"accountkey", "sharedaccesskey", "sharedaccesssignature", "password", "passwd", "pwd", "pass", "secret",
	"clientsecret", "token", "accesstoken", "authtoken", "refreshtoken", "idtoken", "apikey", "key", "accesskey",
	"secretkey", "subscriptionkey", "sig", "signature", "xamzsignature", "xamzcredential", "xamzsecuritytoken",
	"code", "auth", "credential", "credentials",
}

// secretParam reports whether a pair's name is one of secretParams.
func secretParam(name string) bool {
	n := strings.Map(func(r rune) rune {
		if r == ' ' || r == '-' || r == '_' {
			return -1
		}
		return r
	}, strings.ToLower(strings.TrimSpace(name)))
	return slices.Contains(secretParams, n)
}

// secretPairs reports whether a value is a list of key=value pairs, as
// connection strings are ("DefaultEndpointsProtocol=https;AccountName=a;
// AccountKey=…", "Driver={…};Server=…;Uid=u;Pwd=…"), one of which is a
// secret with a value.
func secretPairs(value string) bool {
	if !strings.Contains(value, "=") || !strings.Contains(value, ";") {
		return false
	}
	for _, pair := range strings.Split(value, ";") {
		name, v, ok := strings.Cut(pair, "=")
		if ok && strings.TrimSpace(v) != "" && secretParam(name) {
			return true
		}
	}
	return false
}

// hasJWT reports whether a value holds a JSON Web Token: three dot
// separated base64url parts, the first the encoding of `{"` (eyJ).
func hasJWT(value string) bool {
	for i := strings.Index(value, "eyJ"); i >= 0; {
		parts := strings.SplitN(value[i:], ".", 3)
		if len(parts) == 3 && len(parts[0]) >= 10 && base64URL(parts[0]) && len(parts[1]) >= 4 && base64URL(parts[1]) {
			return true
		}
		j := strings.Index(value[i+3:], "eyJ")
		if j < 0 {
			break
		}
		i += 3 + j
	}
	return false
}

// tokenPrefixes are the prefixes of tokens whose issuers mark them:
// GitHub (ghp_, gho_, ghu_, ghs_, ghr_, github_pat_), GitLab (glpat-),
// Slack (xoxb-, xoxp-, xoxa-, xoxr-, xoxs-, xapp-), OpenAI and Anthropic
// (sk-), Stripe (sk_live_, sk_test_, rk_live_), Hugging Face (hf_), npm
// (npm_), PyPI (pypi-), Google's API keys (AIza) and OAuth tokens
// (ya29.), DigitalOcean (dop_v1_), Shopify (shpat_), SendGrid (SG.).
var tokenPrefixes = []string{
	"ghp_", "gho_", "ghu_", "ghs_", "ghr_", "github_pat_", "glpat-", "xoxb-", "xoxp-", "xoxa-", "xoxr-", "xoxs-",
	"xapp-", "sk-", "sk_live_", "sk_test_", "rk_live_", "hf_", "npm_", "pypi-", "AIza", "ya29.", "dop_v1_",
	"shpat_", "SG.",
}

// minTokenTail is how many token characters must follow a prefix: the
// issuers' tokens carry 20 or more, and a short run (sk-SK, hf_dir) is
// no token.
const minTokenTail = 16

// tokenLike reports whether s starts with a token: minTokenTail token
// characters or more (a path's separator ends them), with two digits or
// more and a letter, as random tokens have and words and names
// (hf_cache_directory, Basic authentication…) do not.
func tokenLike(s string) bool {
	run := tokenRun(s)
	if len(run) < minTokenTail {
		return false
	}
	digits, letters := 0, 0
	for i := range len(run) {
		switch c := run[i]; {
		case c >= '0' && c <= '9':
			digits++
		case c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z':
			letters++
		}
	}
	return digits >= 2 && letters >= 1
}

// hasPrefixedToken reports whether a value holds a token of
// tokenPrefixes: the prefix at the start of the value or after a space,
// =, :, a comma, a semicolon or a quote (not inside a path or a word),
// followed by a token (tokenLike).
func hasPrefixedToken(value string) bool {
	for _, p := range tokenPrefixes {
		for i := 0; ; {
			j := strings.Index(value[i:], p)
			if j < 0 {
				break
			}
			at := i + j
			if (at == 0 || strings.IndexByte(" \t\n=:,;\"'", value[at-1]) >= 0) && tokenLike(value[at+len(p):]) {
				return true
			}
			i = at + len(p)
		}
	}
	return false
}

// hasAuthScheme reports whether a value holds an Authorization header's
// credentials: "Bearer " or "Basic " followed by a token of 16 characters
// or more (OPENAI_CUSTOM_HEADERS="Authorization: Bearer …").
func hasAuthScheme(value string) bool {
	lower := asciiLower(value) // byte for byte: its indexes are value's

	for _, scheme := range []string{"bearer ", "basic "} {
		for i := 0; ; {
			j := strings.Index(lower[i:], scheme)
			if j < 0 {
				break
			}
			at := i + j + len(scheme)
			if tokenLike(strings.TrimLeft(value[at:], " ")) {
				return true
			}
			i = at
		}
	}
	return false
}

// tokenRun is the leading run of token characters of s.
func tokenRun(s string) string {
	for i := range len(s) {
		if !tokenChar(s[i]) {
			return s[:i]
		}
	}
	return s
}

// tokenChar reports whether c may stand in a token: base64url, the
// standard alphabet's +, the padding, and the dots tokens carry (not /,
// which separates a path's names).
func tokenChar(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '-' || c == '+' || c == '=' || c == '.'
}

// base64URL reports whether s is base64url without padding.
func base64URL(s string) bool {
	for i := range len(s) {
		c := s[i]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '-') {
			return false
		}
	}
	return true
}

// asciiLower is s with its ASCII letters lower-cased and every other byte
// kept, so that an index into it is an index into s (strings.ToLower
// turns an invalid byte into three).
func asciiLower(s string) string {
	b := []byte(s)
	for i, c := range b {
		if 'A' <= c && c <= 'Z' {
			b[i] = c + 'a' - 'A'
		}
	}
	return string(b)
}
