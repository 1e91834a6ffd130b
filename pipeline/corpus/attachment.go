package corpus

import (
	"errors"
	"path/filepath"
	"strings"

	"github.com/researchtui/researchtui/search"
)

// A library item's attachment: which one is read, where it is opened, and
// what the import says of one it does not read.

// attachment picks the file to read among an item's attachments: a PDF
// first, then a web snapshot, then text. The others are named, so the
// person hears why an EPUB was not read.
func attachment(files []string) (string, []string) {
	best, rank := "", 0
	var others []string
	for _, f := range files {
		r := 0
		switch strings.ToLower(filepath.Ext(f)) {
		case ".pdf":
			r = 3
		case ".html", ".htm", ".xhtml":
			r = 2
		case ".md", ".markdown", ".txt", ".text":
			r = 1
		}
		if r == 0 {
			others = append(others, f)
			continue
		}
		if r > rank {
			if best != "" {
				others = append(others, best)
			}
			best, rank = f, r
		} else {
			others = append(others, f)
		}
	}
	return best, others
}

// folder is the library's own folder, "" when it has none (Folder).
func (l *Library) folder() string {
	if l.Folder != "" {
		return filepath.Clean(l.Folder)
	}
	switch l.Kind {
	case "bibtex", "csljson", "ris":
		if filepath.IsAbs(l.Origin) {
			return filepath.Dir(l.Origin)
		}
	}
	return ""
}

// attachmentPlace is where an attachment is opened (search.OpenLocalFile):
// rel inside the library's folder when it is in it, so that no link leads
// it out of the folder; else the file in the folder the library names for
// it, which a link may not lead it out of either. Symlinks that stay
// inside are followed (a shared folder of links to its own files reads as
// before); refusing every link would also refuse those, and following
// them all read /proc/self/environ. A path that climbs with ".." (bib
// keeps a relative path's that leaves its file's folder) or is relative
// is refused by itself.
func attachmentPlace(folder, file string) (dir, rel string, inLibrary bool, refused error) {
	for _, el := range strings.Split(filepath.ToSlash(file), "/") {
		if el == ".." {
			return "", "", folder != "", search.ErrPathEscapes
		}
	}
	if !filepath.IsAbs(file) {
		return "", "", false, errRelativePath
	}
	file = filepath.Clean(file)
	if folder != "" {
		if r, err := filepath.Rel(folder, file); err == nil && r != "." && r != ".." && !strings.HasPrefix(r, ".."+string(filepath.Separator)) {
			return folder, r, true, nil
		}
	}
	return filepath.Dir(file), filepath.Base(file), false, nil
}

var errRelativePath = errors.New("named by a relative path, with no folder to find it in")

// refusedReason says why an attachment was not read, for the import's
// report: "attachment x.txt skipped: it is a symlink to outside the
// library folder".
func refusedReason(ij *itemJob, err error) string {
	why := err.Error()
	switch {
	case errors.Is(err, search.ErrOutsideFolder) && ij.inLibrary:
		why = "a symlink to outside the library folder"
	case errors.Is(err, search.ErrPathEscapes) && ij.inLibrary:
		why = `named by a path that climbs out of the library folder ("..")`
	}
	return "attachment " + filepath.Base(ij.file) + " skipped: it is " + why
}

// describeSkipped names attachments of a kind that is not read.
func describeSkipped(files []string) string {
	var parts []string
	for _, f := range files {
		ext := strings.ToLower(filepath.Ext(f))
		why := "not a kind that is read"
		if ext == ".epub" {
			why = "EPUB is not read"
		}
		parts = append(parts, filepath.Base(f)+" ("+why+")")
	}
	return strings.Join(parts, ", ")
}
