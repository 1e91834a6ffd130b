package llm

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"strings"

	"github.com/ollama/ollama/api"
)

// nearFull is the share of num_ctx above which a prompt is reported as
// probably truncated by the server.
const nearFull = 0.95

// Chat runs one streamed chat call. See Backend.
//
// Before the call it looks the model up (/api/show, cached) to size num_ctx
// and to decide on `think`: for a model with the "thinking" capability,
// think is sent as req.Think (Ollama would otherwise think by default); for
// other models it is never sent.
func (o *Ollama) Chat(ctx context.Context, req ChatRequest, onDelta func(Delta)) (ChatResponse, error) {
	var out ChatResponse
	info, err := o.Show(ctx, req.Model)
	if err != nil {
		if IsUnreachable(err) || IsModelMissing(err) || ctx.Err() != nil {
			return out, err
		}
		// Show failed for another reason: go on without its facts.
		info = ModelInfo{Name: req.Model}
	}
	thinking := info.Has("thinking")

	plan, err := planContext(req, info.ContextLength, o.opt.DefaultContext, thinking && req.Think)
	if err != nil {
		return out, err
	}
	out.NumCtx = plan.NumCtx
	out.Truncated = plan.Truncated
	out.Warning = plan.Warning

	areq := o.chatRequest(req, plan, thinking)

	cctx, cancel := o.callCtx(ctx)
	defer cancel()
	cctx, bound, stop := boundAnswer(cctx, "ollama "+req.Model, answerLimit(req.MaxTokens, plan.NumCtx), o.opt.StallTimeout)
	defer stop()
	var content, thought strings.Builder
	done := false
	err = o.client.Chat(cctx, areq, func(r api.ChatResponse) error {
		if err := bound.add(r.Message.Content, r.Message.Thinking); err != nil {
			return err
		}
		if r.Message.Thinking != "" {
			thought.WriteString(r.Message.Thinking)
		}
		if r.Message.Content != "" {
			content.WriteString(r.Message.Content)
		}
		if onDelta != nil && (r.Message.Thinking != "" || r.Message.Content != "") {
			onDelta(Delta{Content: r.Message.Content, Thinking: r.Message.Thinking})
		}
		if r.Done {
			done = true
			out.DoneReason = r.DoneReason
			out.Usage = Usage{
				PromptTokens:     r.PromptEvalCount,
				CompletionTokens: r.EvalCount,
				PromptDuration:   r.PromptEvalDuration,
				EvalDuration:     r.EvalDuration,
				TotalDuration:    r.TotalDuration,
			}
		}
		return nil
	})
	out.Content = content.String()
	out.Thinking = thought.String()
	if err != nil {
		return out, o.mapErr(ctx, cctx, req.Model, err)
	}
	if !done {
		// The api client ends quietly when the connection drops mid-stream.
		if cerr := o.mapErr(ctx, cctx, req.Model, cctx.Err()); cerr != nil {
			return out, cerr
		}
		return out, fmt.Errorf("ollama %s: the answer stream ended before it was complete: %w", req.Model, io.ErrUnexpectedEOF)
	}
	if out.NumCtx > 0 && float64(out.Usage.PromptTokens) >= nearFull*float64(out.NumCtx) {
		out.Truncated = true
		w := fmt.Sprintf("the prompt used %d of %d context tokens; Ollama may have cut it", out.Usage.PromptTokens, out.NumCtx)
		if out.Warning != "" {
			out.Warning += "; " + w
		} else {
			out.Warning = w
		}
	}
	return out, nil
}

// chatRequest builds the wire request. Options go as a map so that a
// temperature of 0 is sent, not dropped.
func (o *Ollama) chatRequest(req ChatRequest, plan contextPlan, thinking bool) *api.ChatRequest {
	stream := true
	areq := &api.ChatRequest{
		Model:   req.Model,
		Stream:  &stream,
		Options: map[string]any{"num_ctx": plan.NumCtx},
	}
	for _, m := range plan.Messages {
		areq.Messages = append(areq.Messages, api.Message{Role: m.Role, Content: m.Content})
	}
	if req.Temperature != nil {
		areq.Options["temperature"] = *req.Temperature
	}
	if req.Seed != nil {
		areq.Options["seed"] = *req.Seed
	}
	if req.MaxTokens > 0 {
		areq.Options["num_predict"] = req.MaxTokens
	}
	switch {
	case len(req.Schema) > 0:
		areq.Format = req.Schema
	case req.JSONMode:
		areq.Format = json.RawMessage(`"json"`)
	}
	if thinking {
		areq.Think = &api.ThinkValue{Value: req.Think}
	}
	if o.opt.KeepAlive != 0 {
		areq.KeepAlive = &api.Duration{Duration: o.opt.KeepAlive}
	}
	return areq
}
