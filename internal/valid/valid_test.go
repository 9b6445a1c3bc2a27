package valid

import (
	"errors"
	"fmt"
	"strings"
	"testing"
)

func TestRender(t *testing.T) {
	t.Parallel()
	e := &Error{Name: "SharedPrefixTokens", Reason: "must be less than {PromptTokens}, and {Other} too"}
	if got, want := e.Error(), "SharedPrefixTokens must be less than PromptTokens, and Other too"; got != want {
		t.Fatalf("Error() = %q, want %q", got, want)
	}
	flag := func(f string) string { return "--" + strings.ToLower(f) }
	if got, want := e.Render(flag), "--sharedprefixtokens must be less than --prompttokens, and --other too"; got != want {
		t.Fatalf("Render = %q, want %q", got, want)
	}
	open := &Error{Name: "X", Reason: "a { without a close"}
	if got := open.Render(flag); got != "--x a { without a close" {
		t.Fatalf("unclosed brace: %q", got)
	}
}

func TestFieldThroughWrapping(t *testing.T) {
	t.Parallel()
	err := fmt.Errorf("burst plan: %w", Errorf("Size", "must be at least %d", 1))
	var f interface{ Field() string }
	if !errors.As(err, &f) || f.Field() != "Size" {
		t.Fatalf("errors.As did not find the field in %v", err)
	}
}
