package search

import (
	"slices"
	"strings"

	"github.com/researchtui/researchtui/textkit"
)

// Descriptor is one search source as the program knows it. Everything
// that lists sources is derived from Descriptors: the names --sources
// accepts (runopts.KnownSources), the sources the command line builds
// and doctor checks (ui/cli), and the planner's routes by intent. Adding a
// source is its client's file, one Descriptor, and a recording that
// TestEverySourceReplaysItsRecording serves it.
type Descriptor struct {
	Name string
	// URLEnv is the variable that points the source elsewhere (a mirror,
	// a proxy, a test); DefaultURL is where it points otherwise.
	URLEnv, DefaultURL string
	// KeyEnv names the variable holding its key, "" when it takes none;
	// for doctor's words, so the web source, which takes either of two,
	// names both ("BRAVE_API_KEY or TAVILY_API_KEY").
	KeyEnv string
	// Probe is the query doctor tries it with ("graphene" when empty).
	Probe string
	// Routes is the source's place (0 first) in each intent's route: the
	// order in which a question of that intent consults the sources. An
	// intent it is absent from does not consult it unless named.
	Routes map[string]int
	// Build makes the source from the environment and its base URL (its
	// variable's, else DefaultURL); a nil Source when it cannot be used
	// here, with Built.Missing saying how to turn it on.
	Build func(e Env, url string) Built
}

// New builds the source in e.
func (d Descriptor) New(e Env) Built {
	u := e.env(d.URLEnv)
	if u == "" {
		u = d.DefaultURL
	}
	b := d.Build(e, u)
	if b.Source == nil && b.Missing == "" {
		b.Missing = "not configured"
	}
	return b
}

// Env is what a source is built from: the shared HTTP client, the
// environment (Getenv; the program's, or a test's), the contact address
// the polite pools ask for, and the person's documents (nil when the
// store is not open).
type Env struct {
	Client       *Client
	Getenv       func(string) string
	ContactEmail string
	LocalDocs    LocalDocsFunc
}

// Built is a source as built: the Source (nil when off), the base URL in
// use (for doctor's probe and the host's status), whether a key was given
// and, when off, why.
type Built struct {
	Source  Source
	URL     string
	Keyed   bool
	Missing string
}

// env reads a variable, trimmed.
func (e Env) env(name string) string {
	if e.Getenv == nil || name == "" {
		return ""
	}
	return strings.TrimSpace(e.Getenv(name))
}

// The intents a plan routes by (pipeline's planner writes one).
const (
	IntentBiomedical = "biomedical"
	IntentCSPhysics  = "cs_physics"
	IntentMaterials  = "materials"
	IntentGeneral    = "general"
)

// Descriptors are the search sources, in the order --sources lists them.
var Descriptors = []Descriptor{
	{Name: "arxiv", URLEnv: "RESEARCHTUI_ARXIV_URL", DefaultURL: DefaultArxivURL,
		Routes: map[string]int{IntentCSPhysics: 0, IntentMaterials: 1, IntentBiomedical: 5, IntentGeneral: 5},
		Build:  func(e Env, url string) Built { return Built{Source: NewArxiv(e.Client, url), URL: url} }},
	{Name: "openalex", URLEnv: "RESEARCHTUI_OPENALEX_URL", DefaultURL: DefaultOpenAlexURL,
		Routes: map[string]int{IntentBiomedical: 2, IntentCSPhysics: 2, IntentMaterials: 2, IntentGeneral: 1},
		Build: func(e Env, url string) Built {
			return Built{Source: NewOpenAlex(e.Client, url, e.ContactEmail), URL: url}
		}},
	{Name: "pubmed", URLEnv: "RESEARCHTUI_PUBMED_URL", DefaultURL: DefaultPubMedURL, KeyEnv: "NCBI_API_KEY",
		Routes: map[string]int{IntentBiomedical: 0, IntentGeneral: 6},
		Build: func(e Env, url string) Built {
			key := e.env("NCBI_API_KEY")
			return Built{Source: NewPubMed(e.Client, url, key, e.ContactEmail), URL: url, Keyed: key != ""}
		}},
	{Name: "semanticscholar", URLEnv: "RESEARCHTUI_SEMANTICSCHOLAR_URL", DefaultURL: DefaultSemanticScholarURL, KeyEnv: "SEMANTIC_SCHOLAR_API_KEY",
		Routes: map[string]int{IntentBiomedical: 1, IntentCSPhysics: 1, IntentMaterials: 3, IntentGeneral: 2},
		Build: func(e Env, url string) Built {
			key := e.env("SEMANTIC_SCHOLAR_API_KEY")
			return Built{Source: NewSemanticScholar(e.Client, url, key), URL: url, Keyed: key != ""}
		}},
	{Name: "crossref", URLEnv: "RESEARCHTUI_CROSSREF_URL", DefaultURL: DefaultCrossrefURL,
		Routes: map[string]int{IntentBiomedical: 3, IntentCSPhysics: 4, IntentMaterials: 4, IntentGeneral: 3},
		Build: func(e Env, url string) Built {
			return Built{Source: NewCrossref(e.Client, url, e.ContactEmail), URL: url}
		}},
	{Name: "web", URLEnv: "RESEARCHTUI_SEARXNG_URL", KeyEnv: "BRAVE_API_KEY or TAVILY_API_KEY",
		Routes: map[string]int{IntentBiomedical: 6, IntentCSPhysics: 5, IntentMaterials: 6, IntentGeneral: 0},
		Build:  buildWeb},
	{Name: "local",
		Probe:  "the",
		Routes: map[string]int{IntentBiomedical: 4, IntentCSPhysics: 3, IntentMaterials: 5, IntentGeneral: 4},
		Build: func(e Env, _ string) Built {
			if e.LocalDocs == nil {
				return Built{Missing: "the store is not open"}
			}
			return Built{Source: NewLocal(e.LocalDocs)}
		}},
	{Name: "materials", URLEnv: "RESEARCHTUI_MATERIALSPROJECT_URL", DefaultURL: DefaultMaterialsProjectURL, KeyEnv: "MP_API_KEY",
		Probe:  "Fe2O3", // a formula: a lone element symbol ("Si") asks nothing
		Routes: map[string]int{IntentMaterials: 0},
		Build: func(e Env, url string) Built {
			key := e.env("MP_API_KEY")
			b := Built{Source: NewMaterialsProject(e.Client, url, key), URL: url, Keyed: key != ""}
			if key == "" {
				b.Missing = "needs MP_API_KEY (free at materialsproject.org)"
			}
			return b
		}},
}

// buildWeb is the web source: the engines whose address or key is set,
// and the URL of the first for doctor's probe.
func buildWeb(e Env, searxng string) Built {
	opt := WebOptions{
		SearxNGURL: searxng,
		BraveKey:   e.env("BRAVE_API_KEY"), BraveURL: e.env("RESEARCHTUI_BRAVE_URL"),
		TavilyKey: e.env("TAVILY_API_KEY"), TavilyURL: e.env("RESEARCHTUI_TAVILY_URL"),
	}
	b := Built{Source: NewWeb(e.Client, opt), URL: searxng, Keyed: opt.BraveKey != "" || opt.TavilyKey != ""}
	switch {
	case len(opt.Engines()) == 0:
		b.Missing = "no engine: set RESEARCHTUI_SEARXNG_URL (a SearxNG instance with format=json), BRAVE_API_KEY or TAVILY_API_KEY"
	case b.URL == "" && opt.BraveKey != "":
		b.URL = textkit.FirstNonEmpty(opt.BraveURL, DefaultBraveURL)
	case b.URL == "":
		b.URL = textkit.FirstNonEmpty(opt.TavilyURL, DefaultTavilyURL)
	}
	return b
}

// SourceNames are the sources' names, in Descriptors' order.
func SourceNames() []string {
	out := make([]string, len(Descriptors))
	for i, d := range Descriptors {
		out[i] = d.Name
	}
	return out
}

// Route is the sources an intent consults, best first (Descriptor.Routes);
// nil for an intent no source is routed for.
func Route(intent string) []string {
	type placed struct {
		name string
		at   int
	}
	var ps []placed
	for _, d := range Descriptors {
		if at, ok := d.Routes[intent]; ok {
			ps = append(ps, placed{d.Name, at})
		}
	}
	slices.SortStableFunc(ps, func(a, b placed) int { return a.at - b.at })
	var out []string
	for _, p := range ps {
		out = append(out, p.name)
	}
	return out
}
