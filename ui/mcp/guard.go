package mcp

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"unicode"
	"unicode/utf8"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// guardWire is the outermost receiving middleware: no request, however
// odd its bytes, may make the server write a reply that is not JSON.
//
// go-sdk v1.8.0 builds a resource-not-found error's data with Go's %q
// (mcp.ResourceNotFoundError), which escapes a control character, DEL or
// an unprintable rune as \x01, \x7f or \U000e0001: not JSON. Writing that
// reply fails, and the SDK then treats its connection as broken: the stdio
// server exits and an HTTP session answers every later request with an
// empty 200. So identifiers (URIs, names, cursors) with such characters are
// refused here, before the SDK sees them, and any error the SDK still
// builds with data that is not JSON loses that data on the way out.
func guardWire(next mcp.MethodHandler) mcp.MethodHandler {
	return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
		if field, value, bad := unprintableField(req.GetParams()); bad {
			return nil, &jsonrpc.Error{
				Code:    jsonrpc.CodeInvalidParams,
				Message: fmt.Sprintf("%s: the %s holds a control character or invalid UTF-8; send it as printable text", method, field),
				Data:    jsonData(map[string]string{field: value}),
			}
		}
		res, err := next(ctx, method, req)
		return res, withJSONData(err)
	}
}

// unprintableField names the first identifier among params that is not
// printable text. Free text (a tool's arguments, a prompt's) is the tool's
// to judge: a question may span lines.
func unprintableField(p mcp.Params) (field, value string, bad bool) { // a case's p may be a nil pointer (params left out)
	check := func(name, v string) (string, string, bool) {
		if printable(v) {
			return "", "", false
		}
		return name, v, true
	}
	switch p := p.(type) {
	case *mcp.ReadResourceParams:
		if p != nil {
			return check("uri", p.URI)
		}
	case *mcp.SubscribeParams:
		if p != nil {
			return check("uri", p.URI)
		}
	case *mcp.UnsubscribeParams:
		if p != nil {
			return check("uri", p.URI)
		}
	case *mcp.CallToolParams:
		if p != nil {
			return check("name", p.Name)
		}
	case *mcp.GetPromptParams:
		if p != nil {
			return check("name", p.Name)
		}
	case *mcp.ListToolsParams:
		if p != nil {
			return check("cursor", p.Cursor)
		}
	case *mcp.ListResourcesParams:
		if p != nil {
			return check("cursor", p.Cursor)
		}
	case *mcp.ListResourceTemplatesParams:
		if p != nil {
			return check("cursor", p.Cursor)
		}
	case *mcp.ListPromptsParams:
		if p != nil {
			return check("cursor", p.Cursor)
		}
	}
	return "", "", false
}

// printable reports whether s is valid UTF-8 made only of printable runes
// (spaces included): what %q leaves as it is.
func printable(s string) bool {
	if !utf8.ValidString(s) {
		return false
	}
	for _, r := range s {
		if !unicode.IsPrint(r) {
			return false
		}
	}
	return true
}

// jsonData marshals an error's data; a value that cannot be marshalled
// (none of ours) leaves the error without data rather than without JSON.
// encoding/json writes invalid UTF-8 as U+FFFD, so the result is JSON.
func jsonData(v any) json.RawMessage {
	b, err := json.Marshal(v)
	if err != nil {
		return nil
	}
	return b
}

// withJSONData drops the data of a JSON-RPC error when it is not JSON, so
// the reply can still be written.
func withJSONData(err error) error {
	var we *jsonrpc.Error
	if err == nil || !errors.As(err, &we) || len(we.Data) == 0 || json.Valid(we.Data) {
		return err
	}
	fixed := *we
	fixed.Data = nil
	if we == err {
		return &fixed
	}
	return &jsonrpc.Error{Code: we.Code, Message: err.Error()}
}
