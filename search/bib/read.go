package bib

import (
	"cmp"
	"encoding/json"
	"fmt"
	"path/filepath"
	"regexp"
	"strings"
)

// File is one library file to read: its path (relative attachment paths
// are resolved against its folder; it may be "") and its bytes.
type File struct {
	Name string
	Data []byte
	// Encoding is the file's encoding when it is not UTF-8 and the person
	// names it (Encodings); "" detects it.
	Encoding string
	dir      string
}

// Read reads a library file in any of the three formats. The format is
// the one its content shows, else its extension's (.bib .bibtex .biblatex;
// .json .csljson; .ris), since exports are often misnamed (a .txt of RIS,
// a .bib that is JSON). name is the file's path: relative attachment
// paths are resolved against its folder. The problems are per entry: the
// items that could be read are returned with them.
func Read(name string, data []byte) ([]Item, []error) {
	items, errs := ReadFiles([]File{{Name: name, Data: data}})
	return items[0], errs[0]
}

// ReadFiles reads library files given together: as Read reads each, and
// a BibTeX entry's crossref or xdata may name an entry of another of the
// files. items[i] and errs[i] are files[i]'s.
func ReadFiles(files []File) (items [][]Item, errs [][]error) {
	items, errs = make([][]Item, len(files)), make([][]error, len(files))
	notes := make([]error, len(files)) // how a file that is not UTF-8 was read
	var bibs []File
	var bibAt []int
	for i, f := range files {
		if len(f.Data) > MaxInput {
			errs[i] = []error{fmt.Errorf("%s is %d MB, more than the %d MB a library file may have", filepath.Base(f.Name), len(f.Data)>>20, MaxInput>>20)}
			continue
		}
		dir := ""
		if f.Name != "" {
			dir = filepath.Dir(f.Name)
		}
		data, note, err := toUTF8(f.Data, f.Encoding)
		if err != nil {
			errs[i] = []error{fmt.Errorf("%s: %w", filepath.Base(f.Name), err)}
			continue
		}
		f.Data = data
		if note != "" {
			notes[i] = &ParseError{Imported: true, Msg: note}
		}
		switch Format(f.Name, f.Data) {
		case "bibtex":
			f.dir = dir
			bibs, bibAt = append(bibs, f), append(bibAt, i)
		case "csljson":
			items[i], errs[i] = readCSLJSON(f.Data)
		case "ris":
			items[i], errs[i] = ReadRIS(f.Data)
			for j := range items[i] {
				for k, path := range items[i][j].Files {
					items[i][j].Files[k] = resolve(path, dir)
				}
			}
		case "wos":
			items[i], errs[i] = ReadWoS(f.Data)
		default:
			errs[i] = []error{fmt.Errorf("%s: %s", filepath.Base(f.Name), notALibrary(f.Data))}
		}
	}
	if len(bibs) > 0 {
		bi, be := readBibTeXFiles(bibs)
		for j, i := range bibAt {
			items[i], errs[i] = bi[j], be[j]
		}
	}
	for i, f := range files {
		if notes[i] != nil && len(items[i]) > 0 {
			errs[i] = append([]error{notes[i]}, errs[i]...)
		}
		if len(items[i]) == 0 && len(errs[i]) == 0 { // never silence: an empty file, a file of another kind
			errs[i] = []error{fmt.Errorf("%s: %s", filepath.Base(f.Name), cmp.Or(otherFormat(f.Data), "no entries in it"))}
		}
	}
	return items, errs
}

// Format names the format of a library file, "bibtex", "csljson" or "ris",
// from its content or else its name's extension; "" when it is none.
func Format(name string, data []byte) string {
	byName := formatOfName(name)
	byContent := sniff(data)
	switch {
	case byContent == "" || byContent == byName:
		return byName
	case byName == "":
		return byContent
	case byContent == "csljson" && !json.Valid(data):
		return byName // broken JSON named .bib: say what is wrong with the BibTeX
	}
	return byContent
}

func formatOfName(name string) string {
	switch strings.ToLower(filepath.Ext(name)) {
	case ".bib", ".bibtex", ".biblatex":
		return "bibtex"
	case ".json", ".csljson", ".csl":
		return "csljson"
	case ".ris":
		return "ris"
	}
	return ""
}

var bibEntryHead = regexp.MustCompile(`@[A-Za-z]+[ \t]*[{(]`)

// notALibrary says what a file that is no library file seems to be, and
// what to do.
func notALibrary(data []byte) string {
	return cmp.Or(otherFormat(data), "not a library file: neither BibTeX, CSL-JSON, RIS nor a Web of Science export")
}

// otherFormat names a bibliographic format that is not read, and how to
// get one that is; "" for anything else.
func otherFormat(data []byte) string {
	head := strings.TrimLeft(decodeInput(data[:min(len(data), 4096)]), " \t\r\n")
	lower := strings.ToLower(head)
	switch {
	case strings.Contains(lower, "<records>") || strings.Contains(lower, "<record>") && strings.Contains(lower, "<ref-type"):
		return "an EndNote XML export, which is not read: export the library from EndNote as RIS (File > Export > RefMan (RIS))"
	case strings.HasPrefix(head, "PMID-") || strings.Contains(head, "\nPMID-"):
		return "a MEDLINE/PubMed (.nbib) file, which is not read: save the PubMed results as \"RIS\" or use a citation manager's export"
	case strings.HasPrefix(head, "%0 ") || strings.Contains(head, "\n%0 "):
		return "an EndNote tagged (.enw) file, which is not read: export it as RIS"
	}
	return ""
}

// sniff tells the format from the first megabyte.
func sniff(data []byte) string {
	text := decodeInput(data[:min(len(data), 1<<20)])
	t := strings.TrimLeft(text, " \t\r\n")
	if t == "" {
		return ""
	}
	if first, _, _ := strings.Cut(t, "\n"); strings.HasPrefix(first, "FN ") && strings.Contains(first, "Web of Science") ||
		strings.HasPrefix(t, "PT ") && len(strings.TrimSpace(first)) == 4 {
		return "wos"
	}
	if t[0] == '[' || t[0] == '{' {
		return "csljson"
	}
	first, _, _ := strings.Cut(t, "\n")
	if tag, _, ok := risLine(strings.TrimRight(first, "\r")); ok && tag == "TY" {
		return "ris"
	}
	if bibEntryHead.MatchString(text) {
		return "bibtex"
	}
	for i, line := range strings.SplitN(t, "\n", 200) {
		if tag, _, ok := risLine(strings.TrimRight(line, "\r")); ok && tag == "TY" && i < 199 {
			return "ris"
		}
	}
	return ""
}
