//go:build integration

package browser

import (
	"bytes"
	"context"
	"fmt"
	"image/png"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"golang.org/x/net/html"

	"github.com/researchtui/researchtui/pipeline"
	"github.com/researchtui/researchtui/pipeline/history"
)

// chromium is the browser's path.
func chromium(t *testing.T) string {
	t.Helper()
	if p := os.Getenv("CHROMIUM"); p != "" {
		return p
	}
	for _, name := range []string{"chromium", "chromium-browser"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	t.Fatal("no Chromium: run scripts/install-chromium.sh (Debian's chromium package) or set CHROMIUM")
	return ""
}

// proxy counts every request the browser makes through it: the page must
// make none.
type proxy struct {
	addr string
	n    atomic.Int64
	seen atomic.Value // last URL
	log  []string
}

func startProxy(t *testing.T) *proxy {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	p := &proxy{addr: ln.Addr().String()}
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if browserOwn(r) {
			http.Error(w, "no network in this test", http.StatusForbidden)
			return
		}
		p.n.Add(1)
		p.seen.Store(r.Method + " " + r.Host + r.URL.Path)
		p.log = append(p.log, r.Method+" "+r.Host+r.URL.Path)
		http.Error(w, "no network in this test", http.StatusForbidden)
	}), ReadHeaderTimeout: 5 * time.Second}
	go func() { _ = srv.Serve(ln) }()
	t.Cleanup(func() { _ = srv.Close() })
	return p
}

// browserOwn are requests Chromium makes for itself whatever the page
// (the component updater and its clock, sign-in), which no flag of
// Debian's build silences: named exactly, so that a page's request to any
// other address is counted.
func browserOwn(r *http.Request) bool {
	hostPath := r.Host + r.URL.Path
	for _, own := range []string{"update.googleapis.com:443", "update.googleapis.com/service/update2", "clients2.google.com/time/1/current", "accounts.google.com:443"} {
		if hostPath == own || strings.HasPrefix(hostPath, own+"/") || (r.Method == http.MethodConnect && r.Host == own) {
			return true
		}
	}
	return false
}

// run runs headless Chromium on the page with args, through the proxy,
// and returns its standard output.
func run(t *testing.T, p *proxy, page string, args ...string) []byte {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	base := []string{"--headless", "--no-sandbox", "--disable-gpu", "--no-first-run", "--disable-background-networking",
		"--disable-component-update", "--disable-sync", "--disable-default-apps", "--disable-extensions", "--hide-scrollbars",
		"--user-data-dir=" + t.TempDir(), "--proxy-server=http://" + p.addr, "--proxy-bypass-list=<-loopback>",
		"--virtual-time-budget=3000",
		// Chromium's own traffic (sign-in, field trials, component and
		// model downloads, safe browsing), which is not the page's.
		"--disable-client-side-phishing-detection", "--disable-domain-reliability", "--no-pings", "--no-default-browser-check",
		"--safebrowsing-disable-auto-update", "--disable-breakpad", "--metrics-recording-only", "--password-store=basic",
		"--disable-features=OptimizationGuideModelDownloading,OptimizationHintsFetching,OptimizationTargetPrediction,OptimizationHints,MediaRouter,DialMediaRouteProvider,Translate,AutofillServerCommunication,CertificateTransparencyComponentUpdater,SignInProfileCreation,AccountConsistency,PushMessaging",
		"--variations-server-url=http://127.0.0.1:1", "--google-base-url=http://127.0.0.1:1", "--gaia-url=http://127.0.0.1:1", "--lso-url=http://127.0.0.1:1"}
	cmd := exec.CommandContext(ctx, chromium(t), append(append(base, args...), "file://"+page)...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("chromium %v: %v\n%s", args, err, tail(stderr.String()))
	}
	return out
}

func tail(s string) string {
	if len(s) > 2000 {
		return s[len(s)-2000:]
	}
	return s
}

// exported writes the report's HTML export to a file.
func exported(t *testing.T, rep pipeline.Report) string {
	t.Helper()
	page, err := history.ExportReport(rep, "html")
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "report.html")
	if err := os.WriteFile(path, page, 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// The proxy sees what a page fetches: a control page with a remote image
// is caught, so silence about the export means something.
func TestTheProxySeesRequests(t *testing.T) {
	p := startProxy(t)
	path := filepath.Join(t.TempDir(), "control.html")
	if err := os.WriteFile(path, []byte(`<!DOCTYPE html><p>x<img src="http://example.org/pixel.png">`), 0o644); err != nil {
		t.Fatal(err)
	}
	run(t, p, path, "--dump-dom")
	if p.n.Load() == 0 {
		t.Fatal("the proxy saw no request from a page with a remote image: the no-network check would prove nothing")
	}
}

// The export opened in Chromium: no request leaves the page, every
// citation is a link to a reference the page has, the review's flow is an
// SVG with its counts, light and dark schemes paint their backgrounds, and
// it prints to PDF.
func TestExportInChromium(t *testing.T) {
	p := startProxy(t)
	rep := reviewReport()
	path := exported(t, rep)

	dom := run(t, p, path, "--dump-dom")
	if n := p.n.Load(); n != 0 {
		t.Errorf("the page made %d requests (last %v): %q", n, p.seen.Load(), p.log)
	}
	doc, err := html.Parse(bytes.NewReader(dom))
	if err != nil {
		t.Fatal(err)
	}
	ids := map[string]bool{}
	var cites []string
	var svgText strings.Builder
	walk(doc, func(n *html.Node) {
		if n.Type != html.ElementNode {
			return
		}
		if id := attr(n, "id"); id != "" {
			ids[id] = true
		}
		if n.Data == "a" && strings.Contains(attr(n, "class"), "cite") && attr(n, "href") != "" {
			cites = append(cites, attr(n, "href"))
		}
		if n.Data == "text" && n.Namespace == "svg" {
			svgText.WriteString(text(n) + "\n")
		}
	})
	if len(cites) < 3 {
		t.Fatalf("%d citation links in the browser's DOM", len(cites))
	}
	for _, href := range cites {
		if !strings.HasPrefix(href, "#") || !ids[href[1:]] {
			t.Errorf("citation %q does not jump to a reference on the page", href)
		}
	}
	f := rep.Flow
	for _, want := range []string{fmt.Sprintf("Records identified (n = %d)", f.Identified), fmt.Sprintf("Studies included (n = %d)", f.Included)} {
		if !strings.Contains(svgText.String(), want) {
			t.Errorf("the drawn flow lacks %q:\n%s", want, svgText.String())
		}
	}

	for scheme, want := range map[string][3]uint32{"light": {0xff, 0xff, 0xff}, "dark": {0x16, 0x16, 0x16}} {
		shot := filepath.Join(t.TempDir(), scheme+".png")
		args := []string{"--window-size=800,600", "--screenshot=" + shot}
		if scheme == "dark" {
			args = append(args, "--force-dark-mode")
		}
		run(t, p, path, args...)
		r, g, b := pixel(t, shot, 2, 2)
		if [3]uint32{r, g, b} != want {
			t.Errorf("%s scheme: background %02x%02x%02x, want %02x%02x%02x", scheme, r, g, b, want[0], want[1], want[2])
		}
	}

	pdf := filepath.Join(t.TempDir(), "report.pdf")
	run(t, p, path, "--no-pdf-header-footer", "--print-to-pdf="+pdf)
	raw, err := os.ReadFile(pdf)
	if err != nil || !bytes.HasPrefix(raw, []byte("%PDF")) || bytes.Count(raw, []byte("/Type /Page")) == 0 {
		t.Errorf("printing to PDF: %d bytes, %v", len(raw), err)
	}
	if n := p.n.Load(); n != 0 {
		t.Errorf("the page made %d requests (last %v)", n, p.seen.Load())
	}
}

func pixel(t *testing.T, path string, x, y int) (r, g, b uint32) {
	t.Helper()
	fh, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer fh.Close()
	img, err := png.Decode(fh)
	if err != nil {
		t.Fatal(err)
	}
	r, g, b, _ = img.At(x, y).RGBA()
	return r >> 8, g >> 8, b >> 8
}

func walk(n *html.Node, f func(*html.Node)) {
	f(n)
	for c := n.FirstChild; c != nil; c = c.NextSibling {
		walk(c, f)
	}
}

func attr(n *html.Node, key string) string {
	for _, a := range n.Attr {
		if a.Key == key {
			return a.Val
		}
	}
	return ""
}

func text(n *html.Node) string {
	if n.Type == html.TextNode {
		return n.Data
	}
	var b strings.Builder
	for c := n.FirstChild; c != nil; c = c.NextSibling {
		b.WriteString(text(c))
	}
	return b.String()
}
