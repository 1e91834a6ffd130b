package corpus

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"

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
		if fi, err := os.Stat(f); err == nil && fi.Mode().IsRegular() {
			r += 10 // a file on this disk before one that is not: Mendeley lists stale copies
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

// attachmentDirs are the folders besides the library's own that its
// attachments may be read from (AttachmentDirs), made absolute and clean.
func (l *Library) attachmentDirs() []string {
	var out []string
	if l.Kind == "zotero" && filepath.IsAbs(l.Origin) {
		// The database's own files: storage/<key>/ in its data folder.
		out = append(out, filepath.Join(l.Origin, "storage"))
	}
	for _, d := range l.AttachmentDirs {
		if abs, err := filepath.Abs(d); err == nil && d != "" {
			out = append(out, abs)
		}
	}
	return out
}

// attachmentPlace is where an attachment is opened (search.OpenLocalFile):
// rel inside the library's folder when it is in it, so that no link leads
// it out of the folder; else rel inside the first of the other folders
// attachments may come from (Zotero's storage, --attachments-from) that
// holds it, which no link may lead it out of either. A file in none of
// them is refused (errOutsideLibrary): a .bib is often shared, and its
// file field could name any of a person's notes. Symlinks that stay
// inside are followed (a shared folder of links to its own files reads as
// before); refusing every link would also refuse those, and following
// them all read /proc/self/environ. A path that climbs with ".." (bib
// keeps a relative path's that leaves its file's folder) or is relative
// is refused by itself.
func attachmentPlace(folder string, others []string, file string) (dir, rel string, inLibrary bool, refused error) {
	for _, el := range strings.Split(filepath.ToSlash(file), "/") {
		if el == ".." {
			return "", "", folder != "", search.ErrPathEscapes
		}
	}
	if !filepath.IsAbs(file) {
		return "", "", false, errRelativePath
	}
	file = filepath.Clean(file)
	if r, ok := within(folder, file); ok {
		return folder, r, true, nil
	}
	for _, d := range others {
		if r, ok := within(d, file); ok {
			return d, r, false, nil
		}
	}
	if _, err := os.Stat(file); err != nil {
		// not on this disk either: a path from another machine
		return "", "", false, fmt.Errorf("%w, and not on this disk", errOutsideLibrary)
	}
	return "", "", false, fmt.Errorf("%w (to read it, import again with --attachments-from %s)", errOutsideLibrary, shellQuote(filepath.Dir(file)))
}

// shellQuote is a path as a shell reads it: in single quotes when it holds
// anything but letters, digits and /._-.
func shellQuote(s string) string {
	if s != "" && strings.Trim(s, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789/._-") == "" {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// within is file's path relative to dir, when file is inside dir.
func within(dir, file string) (string, bool) {
	if dir == "" {
		return "", false
	}
	r, err := filepath.Rel(filepath.Clean(dir), file)
	if err != nil || r == "." || r == ".." || strings.HasPrefix(r, ".."+string(filepath.Separator)) {
		return "", false
	}
	return r, true
}

var (
	errOutsideLibrary = errors.New("outside the library's folders")
	errHardLink       = errors.New("a hard link: the same file has another name, which may be outside the library's folders")
)

// notHardLinked refuses an opened attachment with more than one name: a
// hard link in a shared folder can be any file of the person's on that
// disk, and no path check sees it.
func notHardLinked(info fs.FileInfo) error {
	if st, ok := info.Sys().(*syscall.Stat_t); ok && uint64(st.Nlink) > 1 {
		return errHardLink
	}
	return nil
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
		switch ext {
		case ".epub":
			why = "EPUB is not read"
		case ".pdf", ".html", ".htm", ".xhtml", ".md", ".markdown", ".txt", ".text":
			why = "one file of an item is read"
		}
		parts = append(parts, filepath.Base(f)+" ("+why+")")
	}
	return strings.Join(parts, ", ")
}
