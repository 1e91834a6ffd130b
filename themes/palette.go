// Package themes owns researchtui's colours: named palettes of colour tokens
// and the one builder that turns a palette into every lipgloss style the UI
// draws with and the glamour style the report is rendered with, so the
// report always matches the screens around it.
//
// It deliberately imports no Bubble Tea: a theme is data plus pure
// functions, usable from tests, the headless exporter or any other front end.
package themes

import (
	"sort"
	"strings"
)

// Palette is a theme's colour tokens. Colours are "#rrggbb" strings because
// both lipgloss and glamour's StyleConfig accept them; the tokens are
// semantic (what a colour means), never positional, so Build can stay fully
// token-driven.
type Palette struct {
	Name string
	Dark bool // the palette is meant for a dark background

	Fg       string // body text
	FgMuted  string // secondary text: dates, models, help descriptions
	FgSubtle string // quiet text: thinking, separators, disabled
	Bg       string // screen background (used for badges' text and panel fills)
	BgPanel  string // raised surfaces: selection, dialogs, status bar
	Border   string

	Primary   string // titles, focus, selection accent
	Secondary string // headings inside panes
	Accent    string // links, citation numbers, keys in help

	Success string
	Warning string
	Error   string
	Info    string
	Cost    string // the cost meter, so money stands out from token counts
}

// registry holds the shipped palettes. It is unexported and never mutated
// after init, so there is no global mutable theme state.
var registry = map[string]Palette{
	"dark": {
		Name: "dark", Dark: true,
		Fg: "#d8dee9", FgMuted: "#9aa3b2", FgSubtle: "#5f6878", Bg: "#16181d", BgPanel: "#262a33", Border: "#3b4252",
		Primary: "#b48cff", Secondary: "#7aa2f7", Accent: "#5fd7d7",
		Success: "#9ece6a", Warning: "#e0af68", Error: "#f7768e", Info: "#7dcfff", Cost: "#ffd75f",
	},
	"light": {
		Name: "light", Dark: false,
		Fg: "#24292f", FgMuted: "#57606a", FgSubtle: "#8c959f", Bg: "#ffffff", BgPanel: "#eaeef2", Border: "#d0d7de",
		Primary: "#8250df", Secondary: "#0550ae", Accent: "#0a7e8c",
		Success: "#1a7f37", Warning: "#9a6700", Error: "#cf222e", Info: "#0969da", Cost: "#953800",
	},
	"nord": {
		Name: "nord", Dark: true,
		Fg: "#eceff4", FgMuted: "#a3adbf", FgSubtle: "#616e88", Bg: "#2e3440", BgPanel: "#3b4252", Border: "#4c566a",
		Primary: "#88c0d0", Secondary: "#81a1c1", Accent: "#8fbcbb",
		Success: "#a3be8c", Warning: "#ebcb8b", Error: "#bf616a", Info: "#5e81ac", Cost: "#d08770",
	},
	"gruvbox": {
		Name: "gruvbox", Dark: true,
		Fg: "#ebdbb2", FgMuted: "#bdae93", FgSubtle: "#7c6f64", Bg: "#282828", BgPanel: "#3c3836", Border: "#504945",
		Primary: "#fe8019", Secondary: "#fabd2f", Accent: "#8ec07c",
		Success: "#b8bb26", Warning: "#fabd2f", Error: "#fb4934", Info: "#83a598", Cost: "#d3869b",
	},
	"solarized-light": {
		Name: "solarized-light", Dark: false,
		Fg: "#586e75", FgMuted: "#657b83", FgSubtle: "#93a1a1", Bg: "#fdf6e3", BgPanel: "#eee8d5", Border: "#d3cbb7",
		Primary: "#6c71c4", Secondary: "#268bd2", Accent: "#2aa198",
		Success: "#859900", Warning: "#b58900", Error: "#dc322f", Info: "#268bd2", Cost: "#cb4b16",
	},
}

// Default is the theme used when the config names none (or an unknown one)
// and the terminal background is unknown.
const Default = "dark"

// Auto is the config value meaning "follow the terminal background".
const Auto = "auto"

// Names lists the shipped themes in the order the UI cycles through them:
// the default first, then alphabetically.
func Names() []string {
	out := make([]string, 0, len(registry))
	for n := range registry {
		if n != Default {
			out = append(out, n)
		}
	}
	sort.Strings(out)
	return append([]string{Default}, out...)
}

// Lookup returns the named palette. ok is false for unknown names (the
// caller falls back to Default and may warn).
func Lookup(name string) (Palette, bool) {
	p, ok := registry[strings.ToLower(strings.TrimSpace(name))]
	return p, ok
}

// Resolve picks the palette for a configured name: "auto" or "" follow the
// terminal background (dark or light), unknown names fall back to Default.
func Resolve(name string, darkBackground bool) Palette {
	n := strings.ToLower(strings.TrimSpace(name))
	if n == "" || n == Auto {
		if darkBackground {
			return registry["dark"]
		}
		return registry["light"]
	}
	if p, ok := registry[n]; ok {
		return p
	}
	return registry[Default]
}

// Next is the theme after name in the cycle, for the UI's cycle key.
func Next(name string) string {
	names := Names()
	for i, n := range names {
		if n == name {
			return names[(i+1)%len(names)]
		}
	}
	return names[0]
}
