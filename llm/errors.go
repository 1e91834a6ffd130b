package llm

import (
	"errors"
	"fmt"
)

// ErrTimeout is returned (wrapped) when a single backend call runs past its
// own time limit while the caller's context is still alive.
var ErrTimeout = errors.New("llm: the model did not answer in time")

// UnreachableError means the model server could not be reached at all.
type UnreachableError struct {
	Host string
	Err  error
}

func (e *UnreachableError) Error() string {
	return fmt.Sprintf("cannot reach Ollama at %s: %v. Start it with `ollama serve`, or set OLLAMA_HOST to where it runs.", e.Host, e.Err)
}

func (e *UnreachableError) Unwrap() error { return e.Err }

// ModelMissingError means the server runs but does not have the model.
type ModelMissingError struct {
	Model string
}

func (e *ModelMissingError) Error() string {
	return fmt.Sprintf("model %q is not installed: run `ollama pull %s`", e.Model, e.Model)
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

// IsUnreachable reports whether err is (or wraps) an *UnreachableError.
func IsUnreachable(err error) bool {
	var u *UnreachableError
	return errors.As(err, &u)
}

// IsModelMissing reports whether err is (or wraps) a *ModelMissingError.
func IsModelMissing(err error) bool {
	var m *ModelMissingError
	return errors.As(err, &m)
}
