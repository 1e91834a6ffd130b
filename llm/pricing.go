package llm

import "strings"

// Price is a hosted model's list price in US dollars per million tokens.
type Price struct {
	InputPerM  float64
	OutputPerM float64
}

// Prices are public list prices of common hosted models (standard tier,
// no caching or batch discounts; checked 2025). Keys are lower-case model
// names; dated variants ("gpt-4o-2024-08-06") match their base name. It may
// be extended at start-up, before any concurrent use.
var Prices = map[string]Price{
	"gpt-4o":                 {2.50, 10.00},
	"gpt-4o-mini":            {0.15, 0.60},
	"gpt-4.1":                {2.00, 8.00},
	"gpt-4.1-mini":           {0.40, 1.60},
	"gpt-4.1-nano":           {0.10, 0.40},
	"gpt-5":                  {1.25, 10.00},
	"gpt-5-mini":             {0.25, 2.00},
	"gpt-5-nano":             {0.05, 0.40},
	"o3":                     {2.00, 8.00},
	"o4-mini":                {1.10, 4.40},
	"claude-opus-4":          {15.00, 75.00},
	"claude-opus-4-1":        {15.00, 75.00},
	"claude-sonnet-4":        {3.00, 15.00},
	"claude-sonnet-4-5":      {3.00, 15.00},
	"claude-3-7-sonnet":      {3.00, 15.00},
	"claude-3-5-haiku":       {0.80, 4.00},
	"claude-haiku-4-5":       {1.00, 5.00},
	"gemini-2.5-pro":         {1.25, 10.00},
	"gemini-2.5-flash":       {0.30, 2.50},
	"gemini-2.0-flash":       {0.10, 0.40},
	"text-embedding-3-small": {0.02, 0},
	"text-embedding-3-large": {0.13, 0},
}

// cloudChat and cloudEmbed are the models CloudEquivalent prices at.
const (
	cloudChat  = "gpt-4o-mini"
	cloudEmbed = "text-embedding-3-small"
)

// PriceOf finds a model's price: exact name, else the longest known name
// that it extends with "-" or "@" (dated or pinned variants). A provider
// prefix ("openai/", "anthropic/") is ignored. Ollama names (with a ":" tag,
// like "qwen3:8b") are local and have no price.
func PriceOf(model string) (Price, bool) {
	m := strings.ToLower(strings.TrimSpace(model))
	if i := strings.LastIndexByte(m, '/'); i >= 0 {
		m = m[i+1:]
	}
	if m == "" || strings.Contains(m, ":") {
		return Price{}, false
	}
	if p, ok := Prices[m]; ok {
		return p, true
	}
	best, bestLen := Price{}, 0
	for name, p := range Prices {
		if len(name) > bestLen && len(m) > len(name) && strings.HasPrefix(m, name) &&
			(m[len(name)] == '-' || m[len(name)] == '@') {
			best, bestLen = p, len(name)
		}
	}
	return best, bestLen > 0
}

// Cost is what u would cost on model at list price, in US dollars; 0 for
// unknown and local (Ollama) models. Embedding tokens are billed as input.
func Cost(model string, u Usage) float64 {
	p, ok := PriceOf(model)
	if !ok {
		return 0
	}
	in := float64(u.PromptTokens + u.EmbeddingTokens)
	return (in*p.InputPerM + float64(u.CompletionTokens)*p.OutputPerM) / 1e6
}

// CloudEquivalent is what u would have cost on a cheap hosted model
// (gpt-4o-mini for chat tokens, text-embedding-3-small for embedding
// tokens), for showing next to a local run's cost of 0.
func CloudEquivalent(u Usage) float64 {
	chat := Cost(cloudChat, Usage{PromptTokens: u.PromptTokens, CompletionTokens: u.CompletionTokens})
	return chat + Cost(cloudEmbed, Usage{EmbeddingTokens: u.EmbeddingTokens})
}
