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
// a map lookup.
//
// Locking: mu guards only the maps and is never held while glamour works,
// so Update's cache lookup (cached) never waits on a render. glamour
// renderers are not safe for concurrent use, so each renderer carries its
// own lock: render Cmds of a resize storm for the same width and theme take
// turns on it, while other widths render in parallel.
type mdRenderer struct {
	mu        sync.Mutex
	renderers map[renderKey]*termRenderer // id empty
	results   map[renderKey]string
	order     []renderKey // results in insertion order, for eviction
	gen       int         // bumped by invalidate; older renders don't store
}

// termRenderer is one glamour renderer and the lock that serialises its use.
type termRenderer struct {
	mu sync.Mutex
	tr *glamour.TermRenderer // built on first use, under mu
}

// maxRendered bounds the cached renderings (each can be a megabyte).
const maxRendered = 12

func newMDRenderer() *mdRenderer {
	return &mdRenderer{renderers: map[renderKey]*termRenderer{}, results: map[renderKey]string{}}
}

// cached returns a finished rendering without rendering.
func (r *mdRenderer) cached(k renderKey) (string, bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	s, ok := r.results[k]
	return s, ok
}

// renderer returns the (possibly not yet built) renderer for k's width and
// theme, and the cache generation it belongs to.
func (r *mdRenderer) renderer(k renderKey) (*termRenderer, int) {
	r.mu.Lock()
	defer r.mu.Unlock()
	rk := renderKey{width: k.width, theme: k.theme}
	t, ok := r.renderers[rk]
	if !ok {
		t = &termRenderer{}
		r.renderers[rk] = t
	}
	return t, r.gen
}

// store caches a finished rendering unless the cache was invalidated since
// the render began.
func (r *mdRenderer) store(k renderKey, out string, gen int) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if gen != r.gen {
		return
	}
	if _, ok := r.results[k]; ok {
		return
	}
	r.results[k] = out
	r.order = append(r.order, k)
	if len(r.order) > maxRendered {
		delete(r.results, r.order[0])
		r.order = r.order[1:]
	}
}

// render returns the rendering for k, rendering md with style if needed.
// md must already be sanitized.
func (r *mdRenderer) render(k renderKey, md string, style gansi.StyleConfig) (string, error) {
	if s, ok := r.cached(k); ok {
		return s, nil
	}
	t, gen := r.renderer(k)
	t.mu.Lock()
	defer t.mu.Unlock()
	// A render of the same key may have finished while this one waited.
	if s, ok := r.cached(k); ok {
		return s, nil
	}
	if t.tr == nil {
		tr, err := glamour.NewTermRenderer(glamour.WithStyles(style), glamour.WithWordWrap(k.width))
		if err != nil {
			return "", err
		}
		t.tr = tr
	}
	out, err := t.tr.Render(md)
	if err != nil {
		return "", err
	}
	out = strings.TrimRight(out, "\n ")
	r.store(k, out, gen)
	return out, nil
}

// invalidate drops everything (theme change). Renders under way finish on
// the renderers they hold but don't store their results.
func (r *mdRenderer) invalidate() {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.renderers = map[renderKey]*termRenderer{}
	r.results = map[renderKey]string{}
	r.order = nil
	r.gen++
}

// renderCmd renders the Markdown that markdown gives, off the update loop:
// fitting a report's wide tables renders them too.
func renderCmd(r *mdRenderer, k renderKey, markdown func() string, style gansi.StyleConfig) tea.Cmd {
	return func() tea.Msg {
		out, err := r.render(k, markdown(), style)
		return reportRenderedMsg{key: k, out: out, err: err}
	}
}
