package cli

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/pelletier/go-toml/v2"

	"github.com/researchtui/researchtui/pipeline"
	"github.com/researchtui/researchtui/pipeline/runopts"
	"github.com/researchtui/researchtui/search"
)

// Config is the config file, merged with the environment. Flags win over
// both (applied in commands).
type Config struct {
	// Options are the run options the file and the environment set, over
	// runopts.DefaultOptions: one key per entry of runopts.RunOptions
	// that has one (model, depth, sources, ...), read by decodeConfig.
	runopts.Options `toml:"-"`

	Theme      string `toml:"theme"`
	OllamaHost string `toml:"ollama_host"` // several: comma-separated
	// OpenAI-compatible backend (--backend openai): base URL (env
	// RESEARCHTUI_OPENAI_BASE_URL), key (env OPENAI_API_KEY) and the chat
	// model's context length when the server does not report it.
	OpenAIBaseURL       string `toml:"openai_base_url"`
	OpenAIAPIKey        string `toml:"openai_api_key"`
	OpenAIContextLength int    `toml:"openai_context_length"`
	ContactEmail        string `toml:"contact_email"`
	// FullText turns full-text downloads (PDF, HTML) on or off; on by default.
	FullText *bool `toml:"full_text"`
	// ModelParallel is how many chat requests the model server answers at
	// once (Ollama's OLLAMA_NUM_PARALLEL, 1 by default; per host of a
	// pool). researchtui queues the rest itself. 0: OLLAMA_NUM_PARALLEL
	// from the environment, else 1 (4 for OpenAI-compatible servers).
	ModelParallel int `toml:"model_parallel"`
	// CacheMaxAge is how long cached API answers and documents are reused
	// without asking the network ("168h", "7d"; "off" disables the cache).
	CacheMaxAge string `toml:"cache_max_age"`
	// TUI is the [tui] table earlier versions of the TUI wrote here: its
	// form choices, read below the state file's (tui_state.go).
	TUI map[string]any `toml:"tui"`
	// Tracing is the [tracing] table: OpenTelemetry export of runs (off
	// unless it or the OTEL_EXPORTER_OTLP_* variables turn it on).
	Tracing tracingConfig `toml:"tracing"`

	configPath string
	dataDir    string
}

// tracingConfig is the [tracing] table. The standard OTEL_* variables win
// over it (OTEL_EXPORTER_OTLP_ENDPOINT, OTEL_EXPORTER_OTLP_HEADERS,
// OTEL_SERVICE_NAME, ...).
type tracingConfig struct {
	Enabled     bool              `toml:"enabled"`      // export to the endpoint (default http://localhost:4318)
	Endpoint    string            `toml:"endpoint"`     // OTLP/HTTP base URL
	Headers     map[string]string `toml:"headers"`      // e.g. Authorization for Langfuse
	ServiceName string            `toml:"service_name"` // default researchtui
	// TraceContent exports the question, prompts and completions too
	// (off: they can hold private material).
	TraceContent bool `toml:"trace_content"`
}

const (
	defaultModel      = "qwen3:8b"
	defaultEmbedModel = "nomic-embed-text"
)

func configPath() string {
	if p := os.Getenv("RESEARCHTUI_CONFIG"); p != "" {
		return p
	}
	return filepath.Join(xdg("XDG_CONFIG_HOME", ".config"), "researchtui", "config.toml")
}

func dataDir() string {
	if p := os.Getenv("RESEARCHTUI_DATA_DIR"); p != "" {
		return p
	}
	return filepath.Join(xdg("XDG_DATA_HOME", filepath.Join(".local", "share")), "researchtui")
}

func xdg(env, fallback string) string {
	if v := os.Getenv(env); v != "" {
		return v
	}
	home, err := os.UserHomeDir()
	if err != nil {
		return filepath.Join(os.TempDir(), fallback)
	}
	return filepath.Join(home, fallback)
}

// loadConfig reads the config file (a missing file is fine) and applies the
// environment over it, then defaults.
func loadConfig() (*Config, error) {
	c := &Config{configPath: configPath(), dataDir: dataDir(), Options: runopts.DefaultOptions()}
	raw, err := readConfigFile(c.configPath)
	switch {
	case errors.Is(err, fs.ErrNotExist):
	case err != nil:
		return nil, err
	default:
		if err := decodeConfig(raw, c); err != nil {
			return nil, fmt.Errorf("%w: config file %s: %v", errUsage, c.configPath, err)
		}
	}
	envStr(&c.Model, "RESEARCHTUI_MODEL")
	envStr(&c.EmbedModel, "RESEARCHTUI_EMBED_MODEL")
	envStr(&c.ContactEmail, "RESEARCHTUI_CONTACT_EMAIL")
	envStr(&c.OllamaHost, "OLLAMA_HOST")
	envStr(&c.OpenAIBaseURL, "RESEARCHTUI_OPENAI_BASE_URL")
	envStr(&c.OpenAIAPIKey, "OPENAI_API_KEY")
	if c.Model == "" {
		c.Model = defaultModel
	}
	if c.EmbedModel == "" {
		c.EmbedModel = defaultEmbedModel
	}
	if c.Backend == "" {
		c.Backend = "ollama"
	}
	if c.Theme == "" {
		c.Theme = "auto"
	}
	return c, nil
}

// decodeConfig reads a config file's bytes over c: the settings of its own
// fields, then the run options' keys (runopts.RunOptions) over c.Options.
func decodeConfig(raw []byte, c *Config) error {
	if err := toml.Unmarshal(raw, c); err != nil {
		return err
	}
	var keys map[string]any
	if err := toml.Unmarshal(raw, &keys); err != nil {
		return err
	}
	for _, s := range runopts.RunOptions {
		raw, ok := keys[s.Key]
		if s.Key == "" || !ok {
			continue
		}
		v, err := s.Parse(raw)
		if err != nil {
			return err
		}
		s.Set(&c.Options, v)
	}
	return nil
}

func envStr(dst *string, name string) {
	if v := strings.TrimSpace(os.Getenv(name)); v != "" {
		*dst = v
	}
}

func (c *Config) dbPath() string   { return filepath.Join(c.dataDir, "researchtui.db") }
func (c *Config) logDir() string   { return filepath.Join(c.dataDir, "logs") }
func (c *Config) cacheDir() string { return filepath.Join(c.dataDir, "cache") }

// corpusPath is the local corpus's manifest (corpus).
func (c *Config) corpusPath() string { return filepath.Join(c.dataDir, "corpus.json") }

// defaultOptions are the run options from config, before flags.
func (c *Config) defaultOptions() runopts.Options {
	return c.Options
}

// tuiOptions are the run options the new-research form starts from: the
// config's, with the form's last choice over them (the config's legacy
// [tui] table, then the state file's).
func (c *Config) tuiOptions(state tuiState) runopts.Options {
	o := c.defaultOptions()
	formChoice(c.TUI).Apply(&o)
	state.choice().Apply(&o)
	return o
}

// modelParallel is how many chat requests researchtui sends at once: the
// configured (or OLLAMA_NUM_PARALLEL) figure per Ollama host, times the
// hosts of a pool; an OpenAI-compatible server takes 4 unless configured.
func (c *Config) modelParallel() int {
	per := c.ModelParallel
	switch c.Backend {
	case "openai":
		if per <= 0 {
			per = 4
		}
		return per
	default:
		if per <= 0 {
			per = pipeline.DefaultModelParallel()
		}
		hosts := 0
		for _, h := range strings.Split(c.OllamaHost, ",") {
			if strings.TrimSpace(h) != "" {
				hosts++
			}
		}
		return per * max(hosts, 1)
	}
}

// cacheMaxAge is cache_max_age: how long cached answers are reused, and
// whether the cache is on. A value that cannot be parsed gives the default,
// search.DefaultCacheMaxAge (doctor reports it, see validCacheMaxAge).
func (c *Config) cacheMaxAge() (time.Duration, bool) {
	d, on, err := parseCacheMaxAge(c.CacheMaxAge)
	if err != nil {
		return search.DefaultCacheMaxAge, true
	}
	return d, on
}

// validCacheMaxAge reports a cache_max_age that cannot be parsed.
func (c *Config) validCacheMaxAge() error {
	_, _, err := parseCacheMaxAge(c.CacheMaxAge)
	return err
}

// parseCacheMaxAge reads a Go duration or a number of days ("7d"); "off",
// "0" or "none" turn the cache off; empty is search.DefaultCacheMaxAge.
func parseCacheMaxAge(value string) (d time.Duration, on bool, err error) {
	v := strings.ToLower(strings.TrimSpace(value))
	switch v {
	case "":
		return search.DefaultCacheMaxAge, true, nil
	case "off", "0", "none", "false", "no":
		return 0, false, nil
	}
	if days, ok := strings.CutSuffix(v, "d"); ok {
		if n, err := strconv.ParseFloat(days, 64); err == nil && n > 0 {
			return time.Duration(n * float64(24*time.Hour)), true, nil
		}
	}
	if d, err := time.ParseDuration(v); err == nil && d > 0 {
		return d, true, nil
	}
	return 0, false, fmt.Errorf("cache_max_age = %q is not a duration (use e.g. \"168h\", \"7d\" or \"off\")", value)
}
