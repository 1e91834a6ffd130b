package bib

import (
	"net/url"
	"os"
	"path/filepath"
	"strings"
)

// fileField reads the attachments of a file field in its three dialects:
//
//	Zotero:        Full Text PDF:/abs/x.pdf:application/pdf;Snapshot:/abs/y.html:text/html
//	Better BibTeX: /abs/x.pdf;/abs/y.pdf (\\ and \; escaped)
//	JabRef:        :rel/x.pdf:PDF;:C\:/Users/x.pdf:PDF (\: \; \\ escaped)
//	Mendeley:      :C$\backslash$:/Users/x.pdf:pdf, :home/me/x{\_}1.pdf:pdf
//
// Mendeley writes Unix paths without their leading slash; mendeley says
// the file or the entry is Mendeley's, so they get it back.
func fileField(raw string, mendeley bool) []string {
	v := strings.TrimSpace(raw)
	if v == "" {
		return nil
	}
	latex := strings.Contains(v, `$\backslash$`) || strings.Contains(v, `{\`)
	if latex {
		v = decodeTeXPath(v)
		mendeley = true
	}
	var paths []string
	for _, elem := range splitEscaped(v, ';') {
		if len(paths) == maxList {
			break
		}
		parts := splitEscaped(elem, ':')
		for i := range parts {
			parts[i] = unescapeFile(parts[i])
		}
		path, described := pickPath(parts)
		path = strings.TrimSpace(path)
		if path == "" {
			continue
		}
		path = fileURLPath(path)
		if described && !isAbsPath(path) && !isWebURL(path) && (mendeley || mendeleyRoot(path, parts)) {
			path = "/" + path
		}
		paths = append(paths, path)
	}
	return paths
}

// pickPath finds the path among the colon-separated parts of one
// attachment; described says it came as description:path:type.
func pickPath(parts []string) (string, bool) {
	n := len(parts)
	switch {
	case n == 1:
		return parts[0], false
	case n == 2:
		switch {
		case isDrive(parts[0]) && strings.IndexAny(parts[1], `/\`) == 0: // C:/x.pdf unescaped
			return parts[0] + ":" + parts[1], false
		case parts[0] == "":
			return parts[1], true
		case strings.IndexAny(parts[0], `/\~`) == 0: // /a/b:c.pdf, an absolute path with a colon
			return parts[0] + ":" + parts[1], false
		case looksLikeFileType(parts[1]):
			return parts[0], false
		}
		return parts[1], true
	}
	// description:path:type, where an unescaped drive or URL colon splits
	// the path in two (Test:E:\x.pdf:application/pdf)
	return strings.Join(parts[1:n-1], ":"), true
}

// fileURLPath is the path of a file:// URL (file:///C:/x.pdf is C:/x.pdf),
// or s as it is.
func fileURLPath(s string) string {
	if !strings.HasPrefix(strings.ToLower(s), "file://") {
		return s
	}
	u, err := url.Parse(s)
	if err != nil || u.Path == "" {
		return s
	}
	p := u.Path
	if len(p) >= 3 && p[0] == '/' && isASCIILetter(p[1]) && p[2] == ':' {
		p = p[1:]
	}
	return p
}

func isDrive(s string) bool { return len(s) == 1 && isASCIILetter(s[0]) }

func looksLikeFileType(s string) bool {
	if s == "" || len(s) > 64 || s[0] == '/' {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(isASCIILetter(c) || c >= '0' && c <= '9' || strings.IndexByte("/.+-_", c) >= 0) {
			return false
		}
	}
	return true
}

// mendeleyRoot recognises a Mendeley path whose file does not say so:
// :home/me/x.pdf:pdf (no description, the type its own extension, in
// lower case, under a directory only the root holds).
func mendeleyRoot(path string, parts []string) bool {
	if len(parts) < 3 || parts[0] != "" {
		return false
	}
	typ := parts[len(parts)-1]
	if typ == "" || typ != strings.ToLower(typ) || !strings.EqualFold(strings.TrimPrefix(filepath.Ext(path), "."), typ) {
		return false
	}
	for _, root := range []string{"home/", "Users/", "Volumes/", "media/", "mnt/", "private/", "tmp/", "opt/", "srv/", "run/", "net/", "root/"} {
		if strings.HasPrefix(path, root) {
			return true
		}
	}
	return false
}

// splitEscaped splits at sep where it is not escaped with a backslash,
// keeping the escapes for the next level.
func splitEscaped(s string, sep byte) []string {
	var parts []string
	start := 0
	for i := 0; i < len(s); i++ {
		switch s[i] {
		case '\\':
			i++
		case sep:
			parts = append(parts, s[start:i])
			start = i + 1
		}
	}
	return append(parts, s[start:])
}

// unescapeFile undoes the file field's escapes (\: \; \\); a backslash
// before anything else is a Windows separator and stays.
func unescapeFile(s string) string {
	if !strings.Contains(s, `\`) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' && i+1 < len(s) && strings.IndexByte(`\:;`, s[i+1]) >= 0 {
			i++
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

// isAbsPath recognises absolute paths of any system, since a library
// exported on Windows is read on Linux: /x, \\server\x, C:\x, C:/x, ~/x.
func isAbsPath(p string) bool {
	switch {
	case p == "":
		return false
	case p[0] == '/' || p[0] == '\\' || p[0] == '~':
		return true
	case len(p) >= 3 && isASCIILetter(p[0]) && p[1] == ':' && (p[2] == '/' || p[2] == '\\'):
		return true
	}
	return false
}

// resolve makes a relative attachment path absolute against the library
// file's folder; absolute paths (and ~/, left for the reader's system to
// expand) stay as written. A relative path that climbs out of the folder
// ("../../.ssh/notes.txt") is not cleaned into an absolute path that would
// look like any other: it keeps its ".." (joined to the folder, unclean),
// so the importer sees it and refuses it by name (search.ErrPathEscapes).
func resolve(path, dir string) string {
	if rest, ok := strings.CutPrefix(path, "~/"); ok {
		// BibDesk, Papers and people write home-folder paths
		if home, err := os.UserHomeDir(); err == nil && home != "" {
			return filepath.Join(home, rest)
		}
	}
	if dir == "" || isAbsPath(path) || isWebURL(path) {
		return path
	}
	if !strings.Contains(path, "/") {
		path = strings.ReplaceAll(path, `\`, "/") // files\47\x.pdf written on Windows
	}
	joined := filepath.Join(dir, path)
	if rel, err := filepath.Rel(filepath.Clean(dir), joined); err != nil || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
		return strings.TrimSuffix(dir, string(filepath.Separator)) + string(filepath.Separator) + filepath.FromSlash(path)
	}
	return joined
}
