package mcp

import (
	"bytes"
	"encoding/json"
	"fmt"

	"github.com/researchtui/researchtui/pipeline/runopts"
)

// The research and start_research tools take a question, a review policy,
// and the run options runopts.RunOptions offers to MCP (those with an MCP
// description), each under its config key: the input schema and the
// overlay on the server's defaults both come from that table.

const (
	questionHelp = "the research question, in plain words (at most 4000 characters), e.g. 'which methods detect CRISPR off-target edits, and how sensitive are they?'"
	reviewHelp   = "what happens to the reviewer agent's revision requests: approve (carry them out, the default), reject (finalise the draft as it is) or ask (put them to the person through elicitation when the client supports it, else approve)"
)

// ResearchInput is the research tool's arguments.
type ResearchInput struct {
	Question string
	Review   string
	// Options are the run options' arguments as sent, by key; read over
	// the defaults by researchOptions.
	Options map[string]json.RawMessage
}

// UnmarshalJSON reads the arguments (the SDK has checked them against
// researchSchema: no other keys, each of its type).
func (in *ResearchInput) UnmarshalJSON(b []byte) error {
	var m map[string]json.RawMessage
	if err := json.Unmarshal(b, &m); err != nil {
		return err
	}
	*in = ResearchInput{Options: map[string]json.RawMessage{}}
	for k, v := range m {
		var err error
		switch k {
		case "question":
			err = json.Unmarshal(v, &in.Question)
		case "review":
			err = json.Unmarshal(v, &in.Review)
		default:
			in.Options[k] = v
		}
		if err != nil {
			return fmt.Errorf("%s: %w", k, err)
		}
	}
	return nil
}

// overlay sets on opt the run options the call names; one left empty (or
// null) keeps the default.
func (in ResearchInput) overlay(opt *runopts.Options) error {
	for _, s := range runopts.RunOptions {
		raw, ok := in.Options[s.Key]
		if s.MCP == "" || s.Key == "" || !ok {
			continue
		}
		var x any
		if err := json.Unmarshal(raw, &x); err != nil {
			return fmt.Errorf("%s: %v", s.Key, err)
		}
		if x == nil {
			continue
		}
		v, err := s.Parse(x)
		if err != nil {
			return err
		}
		if s.IsEmpty(v) {
			continue
		}
		s.Set(opt, v)
	}
	return nil
}

// researchSchema is the research tools' input schema: the question, the
// table's MCP options in its order, and the review policy.
func researchSchema() json.RawMessage {
	var b bytes.Buffer
	prop := func(name, typ, desc string) {
		if b.Len() > 0 {
			b.WriteByte(',')
		}
		n, _ := json.Marshal(name)
		d, _ := json.Marshal(desc)
		fmt.Fprintf(&b, `%s:{%s,"description":%s}`, n, typ, d)
	}
	prop("question", `"type":"string"`, questionHelp)
	for _, s := range runopts.RunOptions {
		if s.MCP == "" || s.Key == "" {
			continue
		}
		prop(s.Key, schemaType[s.Type], s.MCP)
	}
	prop("review", `"type":"string"`, reviewHelp)
	return json.RawMessage(`{"type":"object","properties":{` + b.String() + `},"required":["question"],"additionalProperties":false}`)
}

// schemaType is each option type's JSON Schema type (as the SDK infers it
// from the Go type: a list may be null).
var schemaType = map[runopts.OptionType]string{
	runopts.OptionString:   `"type":"string"`,
	runopts.OptionBool:     `"type":"boolean"`,
	runopts.OptionInt:      `"type":"integer"`,
	runopts.OptionList:     `"type":["null","array"],"items":{"type":"string"}`,
	runopts.OptionDuration: `"type":"string"`,
}
