package ui

import (
	"strings"
	"sync"

	tea "charm.land/bubbletea/v2"
	"charm.land/glamour/v2"
	gansi "charm.land/glamour/v2/ansi"
)

// renderKey identifies one rendering of one report: the same Markdown at the
// same width in the same theme always renders the same.
type renderKey struct {
	id    string
	width int
	theme string
}

// mdRenderer renders reports with glamour off the Update loop and memoizes
// both the renderers (per theme and width; building one parses a style) and
// the results (per renderKey), so resizing back or reopening a report costs
// a map lookup. glamour renderers are not safe for concurrent use, hence the
// lock: render Cmds of a resize storm may overlap.
type mdRenderer struct {
	mu        sync.Mutex
	renderers map[renderKey]*glamour.TermRenderer // id empty
	results   map[renderKey]string
	order     []renderKey // results in insertion order, for eviction
}

// maxRendered bounds the cached renderings (each can be a megabyte).
const maxRendered = 12

func newMDRenderer() *mdRenderer {
	return &mdRenderer{renderers: map[renderKey]*glamour.TermRenderer{}, results: map[renderKey]string{}}
}

// cached returns a finished rendering without rendering.
func (r *mdRenderer) cached(k renderKey) (string, bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	s, ok := r.results[k]
	return s, ok
}

// render returns the rendering for k, rendering md with style if needed.
// md must already be sanitized.
func (r *mdRenderer) render(k renderKey, md string, style gansi.StyleConfig) (string, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if s, ok := r.results[k]; ok {
		return s, nil
	}
	rk := renderKey{width: k.width, theme: k.theme}
	tr, ok := r.renderers[rk]
	if !ok {
		var err error
		tr, err = glamour.NewTermRenderer(glamour.WithStyles(style), glamour.WithWordWrap(k.width))
		if err != nil {
			return "", err
		}
		r.renderers[rk] = tr
	}
	out, err := tr.Render(md)
	if err != nil {
		return "", err
	}
	out = strings.TrimRight(out, "\n ")
	r.results[k] = out
	r.order = append(r.order, k)
	if len(r.order) > maxRendered {
		delete(r.results, r.order[0])
		r.order = r.order[1:]
	}
	return out, nil
}

// invalidate drops everything (theme change).
func (r *mdRenderer) invalidate() {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.renderers = map[renderKey]*glamour.TermRenderer{}
	r.results = map[renderKey]string{}
	r.order = nil
}

func renderCmd(r *mdRenderer, k renderKey, md string, style gansi.StyleConfig) tea.Cmd {
	return func() tea.Msg {
		out, err := r.render(k, md, style)
		return reportRenderedMsg{key: k, out: out, err: err}
	}
}
