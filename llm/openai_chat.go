package llm

import (
	"context"
	"fmt"
	"io"
	"strings"

	"github.com/openai/openai-go/v3"
)

// Chat runs one streamed chat completion with stream_options.include_usage,
// so the usage comes from the server's final chunk. See Backend and OpenAI.
//
// The prompt is sized against the model's context length when it is known
// (cut in the middle of the longest message rather than failing on the
// server); ChatResponse.NumCtx reports that length, since the API has no
// num_ctx to send. ChatRequest.Think is not sent (no portable switch);
// reasoning text the server streams (reasoning_content / reasoning) is
// returned as Thinking.
func (o *OpenAI) Chat(ctx context.Context, req ChatRequest, onDelta func(Delta)) (ChatResponse, error) {
	var out ChatResponse
	info, err := o.Show(ctx, req.Model)
	if err != nil {
		return out, err
	}
	msgs := req.Messages
	if info.ContextLength > 0 {
		plan, err := planContext(req, info.ContextLength, 0, false)
		if err != nil {
			return out, err
		}
		msgs = plan.Messages
		out.NumCtx = info.ContextLength
		out.Truncated = plan.Truncated
		out.Warning = plan.Warning
	}

	params := openai.ChatCompletionNewParams{
		Model:         openai.ChatModel(req.Model),
		StreamOptions: openai.ChatCompletionStreamOptionsParam{IncludeUsage: openai.Bool(true)},
	}
	for _, m := range msgs {
		switch m.Role {
		case "system":
			params.Messages = append(params.Messages, openai.SystemMessage(m.Content))
		case "assistant":
			params.Messages = append(params.Messages, openai.AssistantMessage(m.Content))
		default:
			params.Messages = append(params.Messages, openai.UserMessage(m.Content))
		}
	}
	if req.Temperature != nil {
		params.Temperature = openai.Float(*req.Temperature)
	}
	if req.Seed != nil {
		params.Seed = openai.Int(int64(*req.Seed))
	}
	if req.MaxTokens > 0 {
		params.MaxTokens = openai.Int(int64(req.MaxTokens))
	}
	if rf, ok := responseFormat(req); ok {
		params.ResponseFormat = rf
	}

	cctx, cancel := o.callCtx(ctx)
	defer cancel()
	cctx, bound, stop := boundAnswer(cctx, fmt.Sprintf("openai-compatible server %s, model %s", o.Host(), req.Model), answerLimit(req.MaxTokens, out.NumCtx), o.opt.StallTimeout)
	defer stop()
	stream := o.client.Chat.Completions.NewStreaming(cctx, params)
	defer stream.Close()
	var content, thought strings.Builder
	finished, gotUsage := false, false
	for stream.Next() {
		chunk := stream.Current()
		if chunk.JSON.Usage.Valid() && chunk.Usage.TotalTokens+chunk.Usage.PromptTokens+chunk.Usage.CompletionTokens > 0 {
			gotUsage = true
			out.Usage.PromptTokens = int(chunk.Usage.PromptTokens)
			out.Usage.CompletionTokens = int(chunk.Usage.CompletionTokens)
		}
		for _, ch := range chunk.Choices {
			if ch.Index != 0 {
				continue
			}
			d := Delta{Content: ch.Delta.Content, Thinking: reasoningText(ch.Delta)}
			if err := bound.add(d.Content, d.Thinking); err != nil {
				out.Content, out.Thinking = content.String(), thought.String()
				return out, err
			}
			content.WriteString(d.Content)
			thought.WriteString(d.Thinking)
			if onDelta != nil && (d.Content != "" || d.Thinking != "") {
				onDelta(d)
			}
			if ch.FinishReason != "" {
				finished = true
				out.DoneReason = ch.FinishReason
			}
		}
	}
	out.Content = content.String()
	out.Thinking = thought.String()
	if err := stream.Err(); err != nil {
		return out, o.mapErr(ctx, cctx, req.Model, err)
	}
	if !finished {
		if cerr := o.mapErr(ctx, cctx, req.Model, cctx.Err()); cerr != nil {
			return out, cerr
		}
		return out, fmt.Errorf("openai-compatible server %s, model %s: the answer stream ended before it was complete: %w", o.Host(), req.Model, io.ErrUnexpectedEOF)
	}
	if !gotUsage {
		// A server that ignores include_usage: estimate rather than report 0.
		out.Usage.PromptTokens = EstimateTokens(msgs)
		out.Usage.CompletionTokens = max(1, int(float64(len(out.Content))/charsPerToken))
		out.Warning = joinWarning(out.Warning, "the server reported no token usage; the counts are estimates")
	}
	if out.NumCtx > 0 && float64(out.Usage.PromptTokens) >= nearFull*float64(out.NumCtx) {
		out.Truncated = true
		out.Warning = joinWarning(out.Warning, fmt.Sprintf("the prompt used %d of %d context tokens; the server may have cut it", out.Usage.PromptTokens, out.NumCtx))
	}
	return out, nil
}

// reasoningText is the reasoning a server streams beside the content:
// vLLM and DeepSeek send reasoning_content, Ollama and OpenRouter reasoning.
func reasoningText(d openai.ChatCompletionChunkChoiceDelta) string {
	for _, k := range []string{"reasoning_content", "reasoning"} {
		if f, ok := d.JSON.ExtraFields[k]; ok {
			var s string
			if raw := f.Raw(); raw != "" && raw != "null" && jsonUnmarshalString(raw, &s) {
				return s
			}
		}
	}
	return ""
}

func joinWarning(a, b string) string {
	if a == "" {
		return b
	}
	return a + "; " + b
}
