package themes

import (
	"image/color"

	"charm.land/glamour/v2/ansi"
	gstyles "charm.land/glamour/v2/styles"
	"charm.land/lipgloss/v2"
)

// Styles is every style the UI draws with, built from one Palette by Build.
// Screens never construct colours themselves; they pick a field here, so a
// theme change is one rebuild and nothing else.
type Styles struct {
	Palette Palette
	NoColor bool

	Text     lipgloss.Style
	Muted    lipgloss.Style
	Subtle   lipgloss.Style
	Title    lipgloss.Style // screen titles
	Heading  lipgloss.Style // pane headings
	Accent   lipgloss.Style
	Link     lipgloss.Style
	Success  lipgloss.Style
	Warning  lipgloss.Style
	Error    lipgloss.Style
	Info     lipgloss.Style
	Cost     lipgloss.Style
	Thinking lipgloss.Style // the model's thinking: dimmed and apart

	Banner     lipgloss.Style // backend unreachable, with the fix
	Header     lipgloss.Style
	StatusBar  lipgloss.Style
	StatusKey  lipgloss.Style
	StatusItem lipgloss.Style

	Selected lipgloss.Style // the selected row of a list
	Cursor   lipgloss.Style // the row marker of the selected row
	Match    lipgloss.Style // search hits

	Panel        lipgloss.Style // a bordered pane
	PanelFocused lipgloss.Style // the pane that has focus
	Dialog       lipgloss.Style // overlays: review, confirm, help, new research

	// Status badges, by store status value.
	Badges map[string]lipgloss.Style

	// Icons of the run tree.
	IconDone, IconRunning, IconPending, IconFailed lipgloss.Style

	// Help key, description and separator styles for bubbles/help (themes
	// must not import Bubble Tea, so the UI assembles help.Styles).
	HelpKey, HelpDesc, HelpSep lipgloss.Style

	// Markdown is the glamour style for reports, from the same tokens.
	Markdown ansi.StyleConfig
}

// Badge returns the badge style for a session status, or a muted one for
// unknown values.
func (s *Styles) Badge(status string) lipgloss.Style {
	if b, ok := s.Badges[status]; ok {
		return b
	}
	return s.Muted
}

// Build turns a palette into Styles. noColor (NO_COLOR set) drops every
// colour but keeps bold, underline and reverse, so focus and selection stay
// visible without colour.
func Build(p Palette, noColor bool) *Styles {
	c := func(hex string) color.Color {
		if noColor {
			return lipgloss.NoColor{}
		}
		return lipgloss.Color(hex)
	}
	fg := func(hex string) lipgloss.Style { return lipgloss.NewStyle().Foreground(c(hex)) }
	badge := func(hex string) lipgloss.Style {
		st := lipgloss.NewStyle().Bold(true).Padding(0, 1)
		if noColor {
			return st.Reverse(true)
		}
		return st.Foreground(c(p.Bg)).Background(c(hex))
	}
	s := &Styles{Palette: p, NoColor: noColor}
	s.Text = fg(p.Fg)
	s.Muted = fg(p.FgMuted)
	s.Subtle = fg(p.FgSubtle)
	s.Title = fg(p.Primary).Bold(true)
	s.Heading = fg(p.Secondary).Bold(true)
	s.Accent = fg(p.Accent)
	s.Link = fg(p.Accent).Underline(true)
	s.Success = fg(p.Success)
	s.Warning = fg(p.Warning)
	s.Error = fg(p.Error).Bold(true)
	s.Info = fg(p.Info)
	s.Cost = fg(p.Cost).Bold(true)
	s.Thinking = fg(p.FgSubtle).Italic(true)

	s.Banner = lipgloss.NewStyle().Bold(true).Padding(0, 1).Foreground(c(p.Bg)).Background(c(p.Warning))
	s.Header = fg(p.Primary).Bold(true)
	s.StatusBar = lipgloss.NewStyle().Foreground(c(p.FgMuted)).Background(c(p.BgPanel))
	s.StatusKey = lipgloss.NewStyle().Foreground(c(p.Primary)).Background(c(p.BgPanel)).Bold(true)
	s.StatusItem = lipgloss.NewStyle().Foreground(c(p.Fg)).Background(c(p.BgPanel))

	s.Selected = lipgloss.NewStyle().Foreground(c(p.Fg)).Background(c(p.BgPanel)).Bold(true)
	s.Cursor = fg(p.Primary).Bold(true)
	s.Match = lipgloss.NewStyle().Foreground(c(p.Bg)).Background(c(p.Warning))
	if noColor {
		s.Selected = lipgloss.NewStyle().Reverse(true)
		s.Match = lipgloss.NewStyle().Reverse(true).Underline(true)
		s.Banner = lipgloss.NewStyle().Bold(true).Reverse(true).Padding(0, 1)
	}

	s.Panel = lipgloss.NewStyle().Border(lipgloss.RoundedBorder()).BorderForeground(c(p.Border)).Padding(0, 1)
	s.PanelFocused = s.Panel.BorderForeground(c(p.Primary))
	s.Dialog = lipgloss.NewStyle().Border(lipgloss.RoundedBorder()).BorderForeground(c(p.Primary)).Padding(0, 1)

	s.Badges = map[string]lipgloss.Style{
		"running":         badge(p.Info),
		"awaiting_review": badge(p.Warning),
		"completed":       badge(p.Success),
		"failed":          badge(p.Error),
		"cancelled":       badge(p.FgSubtle),
		"interrupted":     badge(p.Cost),
	}
	s.IconDone = fg(p.Success)
	s.IconRunning = fg(p.Info).Bold(true)
	s.IconPending = fg(p.FgSubtle)
	s.IconFailed = fg(p.Error)

	s.HelpKey = fg(p.Accent)
	s.HelpDesc = fg(p.FgMuted)
	s.HelpSep = fg(p.FgSubtle)

	s.Markdown = Markdown(p, noColor)
	return s
}

// Markdown derives the glamour style from the palette: glamour's own dark or
// light style for structure (margins, prefixes, code themes), with every
// colour replaced by a palette token. NO_COLOR gets glamour's plain style.
func Markdown(p Palette, noColor bool) ansi.StyleConfig {
	if noColor {
		return gstyles.NoTTYStyleConfig
	}
	// A struct copy shares pointers with glamour's package-level value; only
	// whole pointers are replaced below, never written through.
	cfg := gstyles.LightStyleConfig
	if p.Dark {
		cfg = gstyles.DarkStyleConfig
	}
	str := func(s string) *string { return &s }
	cfg.Document.Color = str(p.Fg)
	cfg.Heading.Color = str(p.Secondary)
	cfg.H1.Color = str(p.Bg)
	cfg.H1.BackgroundColor = str(p.Primary)
	cfg.H2.Color = str(p.Primary)
	cfg.BlockQuote.Color = str(p.FgMuted)
	cfg.HorizontalRule.Color = str(p.Border)
	cfg.Link.Color = str(p.Accent)
	cfg.LinkText.Color = str(p.Primary)
	cfg.Code.Color = str(p.Accent)
	cfg.Code.BackgroundColor = str(p.BgPanel)
	cfg.Item.Color = nil
	cfg.Enumeration.Color = str(p.Secondary)
	cfg.Strong.Color = nil
	cfg.Emph.Color = nil
	return cfg
}
