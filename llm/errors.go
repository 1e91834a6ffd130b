package llm

import (
	"errors"
	"fmt"
	"github.com/researchtui/researchtui/textkit"
	"strings"
	"time"
)

// ErrTimeout is returned (wrapped) when a single backend call runs past its
// own time limit while the caller's context is still alive.
var ErrTimeout = errors.New("llm: the model did not answer in time")

// UnreachableError means the model server could not be reached at all.
//
// The zero Server/EnvVar/Hint describe Ollama (OLLAMA_HOST, `ollama serve`);
// other backends fill them so the message names their own setting.
type UnreachableError struct {
	Host string
	Err  error
	// Server names the server in the message ("Ollama" when empty).
	Server string
	// EnvVar is the setting that points at the server ("OLLAMA_HOST" when empty).
	EnvVar string
	// Hint replaces the "Start it with `ollama serve`" advice when set.
	Hint string
}

func (e *UnreachableError) Error() string {
	if e.Server == "" && e.EnvVar == "" && e.Hint == "" {
		return fmt.Sprintf("cannot reach Ollama at %s: %v. Start it with `ollama serve`, or set OLLAMA_HOST to where it runs.", e.Host, e.Err)
	}
	server, env, hint := e.Server, e.EnvVar, e.Hint
	if server == "" {
		server = "Ollama"
	}
	if env == "" {
		env = "OLLAMA_HOST"
	}
	if hint == "" {
		hint = "Start the server"
	}
	return fmt.Sprintf("cannot reach %s at %s: %v. %s, or set %s to where it runs.", server, e.Host, e.Err, hint, env)
}

func (e *UnreachableError) Unwrap() error { return e.Err }

// ModelMissingError means the server runs but does not have the model.
type ModelMissingError struct {
	Model string
	// Fix replaces the `ollama pull` advice when set (other backends).
	Fix string
}

func (e *ModelMissingError) Error() string {
	if e.Fix != "" {
		return fmt.Sprintf("model %q is not available: %s", e.Model, e.Fix)
	}
	return fmt.Sprintf("model %q is not installed: run `ollama pull %s`", e.Model, textkit.CleanLine(e.Model))
}

// AuthError means the server refused the credentials (HTTP 401/403). The
// backend cannot be used until the key is fixed, so IsUnreachable reports
// it too (exit code 3, no retries).
type AuthError struct {
	Host   string
	Status int
	EnvVar string // the variable that holds the key, e.g. OPENAI_API_KEY
	Detail string // the server's own message, if any
}

func (e *AuthError) Error() string {
	what := "rejected the API key"
	if e.Status == 403 {
		what = "refused access with this API key"
	}
	msg := fmt.Sprintf("%s %s (HTTP %d)", e.Host, what, e.Status)
	if d := strings.TrimSpace(e.Detail); d != "" {
		msg += ": " + d
	}
	return msg + fmt.Sprintf(". Set %s to a valid key for this server (local servers usually accept any value, or none).", e.EnvVar)
}

// RateLimitError means the server answered 429 and the call gave up after
// its retries.
type RateLimitError struct {
	Host       string
	Model      string
	RetryAfter time.Duration // 0 when the server did not say
	Detail     string
}

func (e *RateLimitError) Error() string {
	msg := fmt.Sprintf("%s rate-limited the requests for %s (HTTP 429)", e.Host, e.Model)
	if e.RetryAfter > 0 {
		msg += fmt.Sprintf("; it asks to retry after %s", e.RetryAfter.Round(time.Second))
	}
	if d := strings.TrimSpace(e.Detail); d != "" {
		msg += ": " + d
	}
	return msg + ". Wait and resume the session, lower --depth, or raise the account's rate limit."
}

// ContextTooSmallError means a prompt cannot fit the model's context window,
// even after cutting the longest message.
type ContextTooSmallError struct {
	Model string
	Need  int // tokens the call needs (estimated)
	Have  int // the model's context length
}

func (e *ContextTooSmallError) Error() string {
	return fmt.Sprintf("model %q has a %d-token context, but this call needs about %d tokens: use a model with a longer context", e.Model, e.Have, e.Need)
}

// IsUnreachable reports whether err is (or wraps) an *UnreachableError or
// an *AuthError: either way the backend cannot be used.
func IsUnreachable(err error) bool {
	var u *UnreachableError
	var a *AuthError
	return errors.As(err, &u) || errors.As(err, &a)
}

// IsModelMissing reports whether err is (or wraps) a *ModelMissingError.
func IsModelMissing(err error) bool {
	var m *ModelMissingError
	return errors.As(err, &m)
}
