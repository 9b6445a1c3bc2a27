// Package referee grades a client's 429 handling: it starts the embedded
// simulator on loopback in one scenario, runs a command with the
// environment the OpenAI, Azure OpenAI, Anthropic and Gemini SDKs (and
// LiteLLM) read pointed at it and a fresh throwaway key the simulator
// requires, waits for the command (within a timeout, after which its
// whole process group is ended; what it leaves running is ended too),
// and turns what the simulator's witness saw into checks with
// expectations: the verdict of `ptuprobe referee`.
//
// It imports the simulator and the report's page writer; it sends no
// traffic of its own, never forwards the caller's keys (every key
// variable the SDKs read is replaced, every other credential-like one
// withheld unless the caller passes it), and writes no key, variable
// name, prompt or host into its outputs (referee.json, referee.md,
// report.html).
package referee
