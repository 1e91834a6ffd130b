package llm

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"regexp"
	"slices"
	"strconv"
	"strings"
)

// StructuredInfo tells how a Structured call went.
type StructuredInfo struct {
	Usage     Usage // summed over all attempts
	Attempts  int   // backend calls made
	Repaired  bool  // the answer used needed RepairJSON
	Fallback  bool  // fallback() was used
	Warnings  []string
	NumCtx    int // of the last call
	Truncated bool
}

func (si *StructuredInfo) warn(w string) {
	if w != "" && !slices.Contains(si.Warnings, w) {
		si.Warnings = append(si.Warnings, w)
	}
}

// Structured asks for a JSON answer (req.Schema, set by the caller) and
// decodes it into T, and never lets the model's JSON fail a run:
//
//  1. call the backend and decode; validate (may be nil) checks the result;
//  2. if that fails, RepairJSON the answer and try again;
//  3. if still bad, retry once, appending the bad answer and the exact
//     error as messages;
//  4. if still bad, or a backend call failed (HTTP 500, dropped stream —
//     a dropped stream on the first call is retried once as is), return
//     fallback() with info.Fallback set.
//
// The error is non-nil only when ctx is done or the call cannot work at
// all (*UnreachableError, *ModelMissingError); T is then the zero value.
// onDelta receives the stream of every attempt.
func Structured[T any](ctx context.Context, b Backend, req ChatRequest, validate func(*T) error, fallback func() T, onDelta func(Delta)) (T, StructuredInfo, error) {
	var info StructuredInfo
	var zero T
	fail := func(why error) (T, StructuredInfo, error) {
		info.Fallback = true
		info.warn(fmt.Sprintf("%s gave no usable structured answer after %d attempt(s) (%v); using a fallback", req.Model, info.Attempts, why))
		if fallback == nil {
			return zero, info, nil
		}
		return fallback(), info, nil
	}

	call := func(r ChatRequest) (ChatResponse, error) {
		resp, err := b.Chat(ctx, r, onDelta)
		info.Attempts++
		info.Usage = info.Usage.Add(resp.Usage)
		if resp.NumCtx > 0 {
			info.NumCtx = resp.NumCtx
		}
		if resp.Truncated {
			info.Truncated = true
		}
		info.warn(resp.Warning)
		return resp, err
	}

	resp, err := call(req)
	if err != nil && !hardError(ctx, err) && errors.Is(err, io.ErrUnexpectedEOF) {
		resp, err = call(req) // a dropped stream: the same question once more
	}
	if err != nil {
		if hardError(ctx, err) {
			return zero, info, hardCause(ctx, err)
		}
		return fail(err)
	}
	v, repaired, perr := decodeStructured(resp.Content, validate)
	if perr == nil {
		info.Repaired = repaired
		return v, info, nil
	}
	if info.Attempts >= 2 {
		return fail(perr)
	}

	retry := req
	retry.Messages = append(slices.Clip(req.Messages),
		Message{Role: "assistant", Content: resp.Content},
		Message{Role: "user", Content: fmt.Sprintf(
			"That answer could not be used: %v\nReply again with only the JSON that follows the schema: no prose, no code fences.", perr)},
	)
	resp, err = call(retry)
	if err != nil {
		if hardError(ctx, err) {
			return zero, info, hardCause(ctx, err)
		}
		return fail(err)
	}
	v, repaired, perr = decodeStructured(resp.Content, validate)
	if perr != nil {
		return fail(perr)
	}
	info.Repaired = repaired
	return v, info, nil
}

// decodeStructured decodes s as-is, then repaired; the error is the one
// of the repaired text when repairing changed anything.
func decodeStructured[T any](s string, validate func(*T) error) (T, bool, error) {
	v, err := decodeValidate(s, validate)
	if err == nil {
		return v, false, nil
	}
	r := RepairJSON(s)
	if c := clampNumbers(r); c != r {
		r = c
	}
	if r != strings.TrimSpace(s) {
		v, rerr := decodeValidate(r, validate)
		if rerr == nil {
			return v, true, nil
		}
		return v, false, rerr
	}
	return v, false, err
}

func decodeValidate[T any](s string, validate func(*T) error) (T, error) {
	var v T
	if strings.TrimSpace(s) == "" {
		return v, errors.New("the answer was empty")
	}
	if err := json.Unmarshal([]byte(s), &v); err != nil {
		return v, fmt.Errorf("invalid JSON: %w", err)
	}
	if validate != nil {
		if err := validate(&v); err != nil {
			return v, fmt.Errorf("invalid answer: %w", err)
		}
	}
	return v, nil
}

// hardError reports errors that retries and fallbacks cannot help.
func hardError(ctx context.Context, err error) bool {
	return ctx.Err() != nil ||
		errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) ||
		IsUnreachable(err) || IsModelMissing(err)
}

func hardCause(ctx context.Context, err error) error {
	if ctx.Err() != nil && !errors.Is(err, ctx.Err()) {
		return ctx.Err()
	}
	return err
}

// jsonNumber matches JSON numbers with an exponent, the only ones that can
// overflow a float64.
var jsonNumber = regexp.MustCompile(`-?\d+(?:\.\d+)?[eE][+-]?\d+`)

// clampNumbers rewrites numbers outside float64's range (grammar-constrained
// sampling happily writes 1e3599, which is valid JSON that Go cannot decode)
// to the nearest representable value.
func clampNumbers(s string) string {
	return jsonNumber.ReplaceAllStringFunc(s, func(n string) string {
		f, err := strconv.ParseFloat(n, 64)
		if err == nil {
			return n
		}
		switch {
		case math.IsInf(f, 1):
			return strconv.FormatFloat(math.MaxFloat64, 'g', -1, 64)
		case math.IsInf(f, -1):
			return strconv.FormatFloat(-math.MaxFloat64, 'g', -1, 64)
		}
		return "0"
	})
}
