package ui

import (
	"fmt"
	"net/url"
	"strings"

	"github.com/charmbracelet/x/ansi"

	"github.com/researchtui/researchtui/pipeline/report"
	"github.com/researchtui/researchtui/themes"
)

// How one cited source is drawn, in the sources pane, the strip under the
// report and the details dialog.

// sourceURL is the address to open for a source: its URL, else its DOI,
// else its arXiv page. Only http(s) addresses are ever handed to the opener.
func sourceURL(s report.CitedSource) string {
	cand := s.URL
	switch {
	case cand != "":
	case s.DOI != "":
		cand = "https://doi.org/" + s.DOI
	case s.ArxivID != "":
		cand = "https://arxiv.org/abs/" + s.ArxivID
	case s.PDFURL != "":
		cand = s.PDFURL
	}
	u, err := url.Parse(cand)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return ""
	}
	return u.String()
}

// sourceLines draws one source: number and title, authors/year/venue,
// address, and the supporting quote.
// label, when set, is said above the quote (what the quote is to the
// selected sentence).
func sourceLines(st *themes.Styles, s report.CitedSource, w int, full, wholeQuote bool, label string) []string {
	var out []string
	num := fmt.Sprintf("[%d] ", s.N)
	title := s.Title
	if title == "" {
		title = "(untitled)"
	}
	for i, l := range strings.Split(wrapText(title, max(w-len(num), 10)), "\n") {
		if i == 0 {
			out = append(out, st.Accent.Render(num)+st.Text.Bold(true).Render(l))
		} else {
			out = append(out, strings.Repeat(" ", len(num))+st.Text.Bold(true).Render(l))
		}
	}
	pad := strings.Repeat(" ", len(num))
	meta, tag := sourceMeta(s, full), joinTags(noticeTag(st, s), readTag(st, s.Read), libraryTag(st, s))
	if meta != "" {
		ml := strings.Split(wrapText(meta, max(w-len(num), 10)), "\n")
		for i, l := range ml {
			line := pad + st.Muted.Render(l)
			if i == len(ml)-1 && tag != "" && ansi.StringWidth(l+" · ")+ansi.StringWidth(tag) <= w-len(num) {
				line += " · " + tag
				tag = ""
			}
			out = append(out, line)
		}
	}
	if tag != "" {
		out = append(out, pad+tag)
	}
	if s.DOI != "" {
		out = append(out, pad+st.Link.Render(trunc("doi:"+s.DOI, w-len(num))))
	}
	if s.URL != "" && (full || s.DOI == "") {
		out = append(out, pad+st.Link.Render(trunc(s.URL, w-len(num))))
	}
	if full {
		for _, l := range noticeLines(st, s, w-len(num)) {
			out = append(out, pad+l)
		}
	}
	if full && s.Source != "" {
		out = append(out, pad+st.Subtle.Render("via "+s.Source))
	}
	if s.Quote != "" {
		if label != "" {
			out = append(out, pad+st.Muted.Render(label))
		}
		q := "“" + s.Quote + "”"
		ql := strings.Split(wrapText(q, max(w-len(num)-2, 10)), "\n")
		if !full && !wholeQuote && len(ql) > 3 {
			ql = append(ql[:3], "…")
		}
		for _, l := range ql {
			out = append(out, pad+st.Thinking.Render("│ "+l))
		}
	}
	if full && s.Reference != "" {
		out = append(out, "", st.Muted.Render("Reference"))
		// the reference is Markdown (*Journal*, escapes); here it is plain text ("y" copies the Markdown)
		for _, l := range strings.Split(wrapText(report.PlainReference(s.Reference), w), "\n") {
			out = append(out, st.Text.Render(l))
		}
	}
	return out
}

// sourceMeta is "authors · year · venue" (authors cut to three unless full).
func sourceMeta(s report.CitedSource, full bool) string {
	var meta []string
	if len(s.Authors) > 0 {
		a := strings.Join(s.Authors, ", ")
		if !full && len(s.Authors) > 3 {
			a = strings.Join(s.Authors[:3], ", ") + " et al."
		}
		meta = append(meta, a)
	}
	if s.Year > 0 {
		meta = append(meta, fmt.Sprint(s.Year))
	}
	if s.Venue != "" {
		meta = append(meta, s.Venue)
	}
	return strings.Join(meta, " · ")
}

// libraryTag marks a work from the person's own library.
func libraryTag(st *themes.Styles, s report.CitedSource) string {
	if s.Library == "" {
		return ""
	}
	return st.Accent.Render("your library: " + sanitizeLine(s.Library))
}

// noticeTag marks a source whose standing changed after publication:
// "retracted" in the error colour (it is not support for the report's
// claims), else "corrected" in the warning colour. Empty for the rest.
func noticeTag(st *themes.Styles, s report.CitedSource) string {
	switch {
	case s.Retracted:
		return st.Error.Render("retracted")
	case corrected(s):
		return st.Warning.Render("corrected")
	}
	return ""
}

// corrected: a notice corrects this source (it is not itself the notice).
func corrected(s report.CitedSource) bool {
	for _, u := range s.Updates {
		if !u.Notice && u.IsCorrection() {
			return true
		}
	}
	return false
}

// noticeLines list a source's notices for the details view, each with the
// notice's DOI so the reader can look it up: "retraction: doi:… · 2010-02-06
// · retraction-watch", or, when the source is itself a notice, what it
// updates.
func noticeLines(st *themes.Styles, s report.CitedSource, w int) []string {
	var out []string
	if s.Retracted && !hasRetraction(s) {
		// OpenAlex says so without naming the notice
		out = append(out, st.Error.Render(trunc("retracted (no notice named)", w)))
	}
	for _, u := range s.Updates {
		what := strings.ReplaceAll(sanitizeLine(u.Type), "_", " ")
		var parts []string
		if u.Notice {
			parts = append(parts, "this is a "+what+" notice for")
		} else {
			parts = append(parts, what+" notice")
		}
		if u.DOI != "" {
			parts[0] += " doi:" + sanitizeLine(u.DOI)
		}
		if u.Date != "" {
			parts = append(parts, sanitizeLine(u.Date))
		}
		if u.Source != "" {
			parts = append(parts, sanitizeLine(u.Source))
		}
		style := st.Warning
		if u.IsRetraction() {
			style = st.Error
		}
		for _, l := range strings.Split(wrapText(strings.Join(parts, " · "), max(w, 10)), "\n") {
			out = append(out, style.Render(l))
		}
	}
	return out
}

func hasRetraction(s report.CitedSource) bool {
	for _, u := range s.Updates {
		if u.IsRetraction() {
			return true
		}
	}
	return false
}

// joinTags puts the non-empty tags side by side.
func joinTags(tags ...string) string {
	var out []string
	for _, t := range tags {
		if t != "" {
			out = append(out, t)
		}
	}
	return strings.Join(out, " · ")
}
