package zotero

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"time"

	"github.com/researchtui/researchtui/search/bib"
)

// DefaultBase is the user library in the local API Zotero 7 and later
// serve when "Allow other applications on this computer to communicate
// with Zotero" is on (Settings → Advanced). User ID 0 is the logged-in
// user.
const DefaultBase = "http://127.0.0.1:23119/api/users/0/"

// DefaultMaxBody is the most one answer of the API may hold: a page of 100
// items is some 300 KB, the largest answers (an item with a 64,000-word
// abstract) a few MB.
const DefaultMaxBody = 32 << 20

// ErrNotRunning is the error of a local API nobody answers on.
var ErrNotRunning = errors.New("Zotero is not running, or its local API is off " +
	"(Zotero 7: Settings → Advanced → Allow other applications on this computer to communicate with Zotero)")

// API reads a library through the local API of a running Zotero, which
// serves the web API's format (api.zotero.org, version 3) on loopback. It
// only reads: no API key is needed and nothing is written.
type API struct {
	// Base is the library's URL; DefaultBase when empty.
	Base string
	// Client makes the requests; a client with a 2-minute timeout when nil.
	Client *http.Client
	// BaseDir is Zotero's "Linked Attachment Base Directory" (Settings →
	// Files and Folders), against which linked files stored as
	// "attachments:..." resolve. When empty, Zotero is asked for each such
	// file's path.
	BaseDir string
	// PageSize is the number of objects asked for at a time; 100 (the web
	// API's largest page) when 0.
	PageSize int
	// MaxBody caps the size of one answer; DefaultMaxBody when 0.
	MaxBody int64
}

// maxObjects bounds the objects one list may have: the largest Zotero
// libraries hold some 100,000 items.
const maxObjects = 2_000_000

// maxRestarts bounds the times a read starts again because the library
// changed while it was being read page by page.
const maxRestarts = 3

// errChanged is a library that changed between two pages of one read.
var errChanged = errors.New("the Zotero library changed while it was being read")

// Library reads the collections and items of the library, with the paths
// of their attachment files. When the library's version is still
// sinceVersion (> 0), Zotero answers 304 Not Modified, and Library returns
// at once with unchanged true and only Version set.
//
// Zotero 10 counts every local change in the version; Zotero 7 to 9 give
// the version of the last sync, so a change not yet synced is seen after
// the next sync, and a library that is never synced has version 0, which
// is always read in full.
func (a *API) Library(ctx context.Context, sinceVersion int) (Library, bool, error) {
	for range maxRestarts {
		lib, unchanged, err := a.read(ctx, sinceVersion)
		if !errors.Is(err, errChanged) {
			return lib, unchanged, err
		}
	}
	return Library{}, false, fmt.Errorf("%w %d times in a row; try again when it is done syncing", errChanged, maxRestarts)
}

func (a *API) read(ctx context.Context, sinceVersion int) (Library, bool, error) {
	var lib Library
	// The first page asks whether anything changed: Zotero compares the
	// library's version, which any change of any object bumps.
	var cols []apiObject
	version, unchanged, err := a.list(ctx, "collections", nil, sinceVersion, -1, &cols)
	if err != nil || unchanged {
		return Library{Version: sinceVersion}, unchanged, err
	}
	lib.Version = version
	for _, o := range cols {
		var d apiCollection
		if json.Unmarshal(o.Data, &d) != nil || !validKey(o.Key) {
			continue
		}
		lib.Collections = append(lib.Collections, Collection{Key: o.Key, Name: bib.CleanLine(d.Name), Parent: d.Parent.key})
	}

	var tops []apiObject
	q := url.Values{"sort": {"dateAdded"}, "direction": {"asc"}}
	if _, _, err := a.list(ctx, "items/top", q, 0, version, &tops); err != nil {
		return Library{}, false, err
	}
	var atts []apiObject
	q = url.Values{"itemType": {"attachment"}, "sort": {"dateAdded"}, "direction": {"asc"}}
	if _, _, err := a.list(ctx, "items", q, 0, version, &atts); err != nil {
		return Library{}, false, err
	}

	recs := make([]*record, 0, len(tops))
	byKey := make(map[string]*record, len(tops))
	for _, o := range tops {
		r, ok := o.record()
		if !ok || byKey[r.key] != nil {
			continue
		}
		recs = append(recs, r)
		byKey[r.key] = r
	}
	for i, o := range atts {
		var d apiAttachment
		if json.Unmarshal(o.Data, &d) != nil || d.ItemType != "attachment" {
			continue
		}
		parent := byKey[d.Parent.key]
		if parent == nil {
			continue // a standalone attachment, or a child of an item not read
		}
		p, err := a.attachmentPath(ctx, o, d)
		if err != nil {
			return Library{}, false, err
		}
		if p != "" {
			parent.files = append(parent.files, file{path: p, contentType: d.ContentType, order: i})
		}
	}
	boundChains(lib.Collections)
	paths := collectionPaths(lib.Collections)
	for _, r := range recs {
		lib.Items = append(lib.Items, r.item(paths))
	}
	return lib, false, nil
}

// attachmentPath is where an attachment's file is on this disk, "" when it
// is not a file kept (a link, a note-like attachment, an image) or Zotero
// knows no path for it. Zotero's answer for an imported file links the
// file itself (links.enclosure, a file:// URL); a linked file's path is in
// its data, relative to the base directory when it starts "attachments:";
// otherwise Zotero is asked: GET items/<key>/file/view/url answers the
// file:// URL as text (server_localAPI.js, Zotero.Server.LocalAPI.ItemFile).
// No file's bytes are ever downloaded.
func (a *API) attachmentPath(ctx context.Context, o apiObject, d apiAttachment) (string, error) {
	mode, known := linkModeNames[d.LinkMode]
	name := d.Filename
	if mode == linkLinkedFile {
		name = d.Path
	}
	switch {
	case known && (mode == linkLinkedURL || mode == linkEmbedded):
		return "", nil
	case fileKind(d.ContentType, name) == 0:
		return "", nil
	}
	if p := fileURLPath(o.Links.Enclosure.Href); p != "" {
		return p, nil
	}
	if mode == linkLinkedFile {
		if p := storedPath(mode, d.Path, o.Key, "", a.BaseDir); p != "" {
			return p, nil
		}
	}
	if !validKey(o.Key) {
		return "", nil
	}
	body, status, err := a.get(ctx, "items/"+o.Key+"/file/view/url", nil, 0)
	if err != nil {
		return "", err
	}
	if status != http.StatusOK {
		return "", nil // 404: gone since the list; 400: not a file attachment
	}
	return fileURLPath(strings.TrimSpace(string(body))), nil
}

// list reads every page of a multi-object answer into out. since > 0 asks
// for a 304 when the library's version is still since; want >= 0 is the
// version every page must have (the version of the read's first answer):
// a page of another version means the library changed under the read.
func (a *API) list(ctx context.Context, path string, q url.Values, since, want int, out *[]apiObject) (version int, unchanged bool, err error) {
	size := a.PageSize
	if size <= 0 || size > 100 {
		size = 100
	}
	start := 0
	for page := 0; ; page++ {
		pq := url.Values{}
		for k, v := range q {
			pq[k] = v
		}
		pq.Set("format", "json")
		pq.Set("limit", strconv.Itoa(size))
		pq.Set("start", strconv.Itoa(start))
		var ifSince int
		if page == 0 {
			ifSince = since
		}
		resp, err := a.do(ctx, path, pq, ifSince)
		if err != nil {
			return 0, false, err
		}
		if resp.status == http.StatusNotModified {
			if page == 0 && since > 0 {
				return since, true, nil
			}
			return 0, false, fmt.Errorf("Zotero's local API answered %s with 304 Not Modified unasked", path)
		}
		if resp.status != http.StatusOK {
			return 0, false, statusError(path, resp.status, resp.body)
		}
		v, err := headerInt(resp.header, "Last-Modified-Version")
		if err != nil {
			return 0, false, fmt.Errorf("Zotero's local API answered %s: %w", path, err)
		}
		if page == 0 {
			version = v
		}
		if want < 0 && page == 0 {
			want = v
		}
		if v != want {
			return 0, false, errChanged
		}
		var objs []apiObject
		if err := json.Unmarshal(resp.body, &objs); err != nil {
			return 0, false, fmt.Errorf("Zotero's local API answered %s with something that is not a list of objects: %v", path, err)
		}
		*out = append(*out, objs...)
		if len(*out) > maxObjects {
			return 0, false, fmt.Errorf("Zotero's local API answered %s with more than %d objects", path, maxObjects)
		}
		total, terr := headerInt(resp.header, "Total-Results")
		start += len(objs)
		switch {
		case len(objs) < size:
			return version, false, nil // a short page is the last (Zotero slices start..start+limit)
		case terr == nil && resp.header.Get("Total-Results") != "":
			if start >= total {
				return version, false, nil
			}
		case !hasNext(resp.header.Get("Link")):
			return version, false, nil
		}
	}
}

// hasNext reports whether a Link header has a rel="next" link.
func hasNext(link string) bool {
	for part := range strings.SplitSeq(link, ",") {
		for attr := range strings.SplitSeq(part, ";") {
			attr = strings.ReplaceAll(strings.TrimSpace(attr), " ", "")
			if strings.EqualFold(attr, `rel="next"`) || strings.EqualFold(attr, "rel=next") {
				return true
			}
		}
	}
	return false
}

// headerInt reads a numeric header; a missing one is 0.
func headerInt(h http.Header, name string) (int, error) {
	s := strings.TrimSpace(h.Get(name))
	if s == "" {
		return 0, nil
	}
	n, err := strconv.Atoi(s)
	if err != nil || n < 0 {
		return 0, fmt.Errorf("%s is not a version number: %q", name, bib.CleanLine(bib.Truncate(s, 40)))
	}
	return n, nil
}

type apiResponse struct {
	status int
	header http.Header
	body   []byte
}

// get fetches one answer that is not a list.
func (a *API) get(ctx context.Context, path string, q url.Values, since int) ([]byte, int, error) {
	resp, err := a.do(ctx, path, q, since)
	if err != nil {
		return nil, 0, err
	}
	return resp.body, resp.status, nil
}

func (a *API) do(ctx context.Context, path string, q url.Values, since int) (apiResponse, error) {
	base := a.Base
	if base == "" {
		base = DefaultBase
	}
	u, err := url.Parse(strings.TrimRight(base, "/") + "/" + path)
	if err != nil {
		return apiResponse{}, fmt.Errorf("zotero: bad API base %q: %w", base, err)
	}
	if len(q) > 0 {
		u.RawQuery = q.Encode()
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u.String(), nil)
	if err != nil {
		return apiResponse{}, fmt.Errorf("zotero: %w", err)
	}
	req.Header.Set("Zotero-API-Version", "3")
	req.Header.Set("Accept", "application/json")
	if since > 0 {
		req.Header.Set("If-Modified-Since-Version", strconv.Itoa(since))
	}
	client := a.Client
	if client == nil {
		client = defaultClient
	}
	resp, err := client.Do(req)
	if err != nil {
		if ctx.Err() != nil {
			return apiResponse{}, ctx.Err()
		}
		var op *net.OpError
		if errors.As(err, &op) && op.Op == "dial" {
			return apiResponse{}, fmt.Errorf("%w (%s: %v)", ErrNotRunning, u.Host, op.Err)
		}
		return apiResponse{}, fmt.Errorf("zotero: reading %s: %w", path, err)
	}
	defer resp.Body.Close()
	limit := a.MaxBody
	if limit <= 0 {
		limit = DefaultMaxBody
	}
	body, err := io.ReadAll(io.LimitReader(resp.Body, limit+1))
	if err != nil {
		if ctx.Err() != nil {
			return apiResponse{}, ctx.Err()
		}
		return apiResponse{}, fmt.Errorf("zotero: reading %s: %w", path, err)
	}
	if int64(len(body)) > limit {
		return apiResponse{}, fmt.Errorf("zotero: the answer to %s is larger than %d MB", path, limit>>20)
	}
	return apiResponse{status: resp.StatusCode, header: resp.Header, body: body}, nil
}

var defaultClient = &http.Client{
	Timeout: 2 * time.Minute,
	// The local API redirects /file to a file:// URL; nothing here follows
	// redirects, which are never an answer this reader wants.
	CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
}

// statusError explains an answer that is not a 200.
func statusError(path string, status int, body []byte) error {
	msg := bib.CleanLine(bib.Truncate(string(bytes.TrimSpace(body)), 200))
	switch {
	case status == http.StatusForbidden && strings.Contains(strings.ToLower(msg), "local api"):
		// "Local API is not enabled": the connector server runs, the API is off.
		return fmt.Errorf("%w: Zotero answered %q", ErrNotRunning, msg)
	case status == http.StatusNotFound && strings.HasPrefix(path, "collections"):
		return fmt.Errorf("Zotero answered 404 Not Found for its local API: it needs Zotero 7 or later, with %q on (Settings → Advanced)",
			"Allow other applications on this computer to communicate with Zotero")
	}
	if msg == "" {
		msg = http.StatusText(status)
	}
	return fmt.Errorf("Zotero's local API answered %s with %d: %s", path, status, msg)
}

// fileURLPath is the local path of a file:// URL, "" for anything else.
func fileURLPath(s string) string {
	u, err := url.Parse(strings.TrimSpace(s))
	if err != nil || !strings.EqualFold(u.Scheme, "file") || u.Opaque != "" {
		return ""
	}
	if u.Host != "" && !strings.EqualFold(u.Host, "localhost") {
		if runtime.GOOS != "windows" {
			return ""
		}
		return filepath.FromSlash(`//` + u.Host + u.Path) // a UNC path
	}
	p := u.Path
	if runtime.GOOS == "windows" && len(p) >= 3 && p[0] == '/' && p[2] == ':' {
		p = p[1:] // /C:/Users/... is C:/Users/...
	}
	p = filepath.FromSlash(p)
	if !filepath.IsAbs(p) {
		return ""
	}
	return filepath.Clean(p)
}

// apiObject is one object of a multi-object answer.
type apiObject struct {
	Key   string          `json:"key"`
	Data  json.RawMessage `json:"data"`
	Meta  apiMeta         `json:"meta"`
	Links struct {
		Enclosure struct {
			Href string `json:"href"`
		} `json:"enclosure"`
	} `json:"links"`
}

type apiMeta struct {
	ParsedDate string `json:"parsedDate"`
}

// apiKey is a key that the API writes as a string, or as false for none
// (parentCollection: false; parentItem: false in some answers).
type apiKey struct{ key string }

func (k *apiKey) UnmarshalJSON(b []byte) error {
	var s string
	if json.Unmarshal(b, &s) == nil {
		k.key = s
	}
	return nil // false, null or anything else: no key
}

type apiCollection struct {
	Name   string `json:"name"`
	Parent apiKey `json:"parentCollection"`
}

type apiAttachment struct {
	ItemType    string `json:"itemType"`
	Parent      apiKey `json:"parentItem"`
	LinkMode    string `json:"linkMode"`
	ContentType string `json:"contentType"`
	Filename    string `json:"filename"`
	Path        string `json:"path"`
}

// record reads a regular item: its fields are the string members of data
// (Zotero names them as the database does), creators, tags and
// collections the rest.
func (o apiObject) record() (*record, bool) {
	var raw map[string]json.RawMessage
	if json.Unmarshal(o.Data, &raw) != nil {
		return nil, false
	}
	var head struct {
		Key         string `json:"key"`
		ItemType    string `json:"itemType"`
		Creators    []apiCreator
		Tags        []apiTag
		Collections []string
	}
	if json.Unmarshal(o.Data, &head) != nil {
		// A member of an unexpected shape: read what can be read.
		head.Creators, head.Tags, head.Collections = nil, nil, nil
		_ = json.Unmarshal(raw["key"], &head.Key)
		_ = json.Unmarshal(raw["itemType"], &head.ItemType)
		_ = json.Unmarshal(raw["creators"], &head.Creators)
		_ = json.Unmarshal(raw["tags"], &head.Tags)
		_ = json.Unmarshal(raw["collections"], &head.Collections)
	}
	key := o.Key
	if key == "" {
		key = head.Key
	}
	if key == "" || head.ItemType == "" || skippedTypes[head.ItemType] {
		return nil, false
	}
	r := &record{key: key, itemType: head.ItemType, fields: map[string]string{}, parsedDate: o.Meta.ParsedDate}
	for name, v := range raw {
		var s string
		if len(v) > 0 && v[0] == '"' && json.Unmarshal(v, &s) == nil {
			r.fields[name] = s
		}
	}
	for _, c := range head.Creators {
		r.creators = append(r.creators, creator{typ: c.CreatorType, first: c.FirstName, last: c.LastName, name: c.Name})
	}
	for _, t := range head.Tags {
		r.tags = append(r.tags, t.Tag)
	}
	r.collections = head.Collections
	return r, true
}

type apiCreator struct {
	CreatorType string `json:"creatorType"`
	FirstName   string `json:"firstName"`
	LastName    string `json:"lastName"`
	Name        string `json:"name"`
}

type apiTag struct {
	Tag string `json:"tag"`
}
