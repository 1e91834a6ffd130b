package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"regexp"
	"strconv"
	"strings"
)

// runEnv points a researchtui process at the world.
type runEnv struct {
	modelURL, searchURL string
	// fullText lets researchtui download the pages it finds. Off, it reads
	// the search engine's snippets, as the peer does: the same evidence.
	fullText bool
}

// researchtui runs one headless research on the web source alone, in a
// data dir of its own, and reads back what it cited.
func (e runEnv) researchtui(bin string, q question) (result, error) {
	dir, err := os.MkdirTemp("", "peerbench-")
	if err != nil {
		return result{}, err
	}
	defer os.RemoveAll(dir)
	if err := os.WriteFile(dir+"/config.toml", []byte(fmt.Sprintf("full_text = %v\n", e.fullText)), 0o600); err != nil {
		return result{}, err
	}
	env := append(os.Environ(), "OLLAMA_HOST="+e.modelURL, "RESEARCHTUI_SEARXNG_URL="+e.searchURL,
		"RESEARCHTUI_DATA_DIR="+dir, "RESEARCHTUI_CONFIG="+dir+"/config.toml", "XDG_CACHE_HOME="+dir)
	run := exec.Command(bin, "run", "--json", "--sources", "web", "--model", chatModel, "--embed-model", "nomic-embed-text", q.text)
	run.Env = env
	var stderr bytes.Buffer
	run.Stderr = &stderr
	out, err := run.Output()
	if err != nil {
		return result{}, fmt.Errorf("researchtui run: %v: %s", err, stderr.String())
	}
	var first struct {
		SessionID string `json:"session_id"`
	}
	line, _, _ := bytes.Cut(out, []byte("\n"))
	if err := json.Unmarshal(line, &first); err != nil || first.SessionID == "" {
		return result{}, fmt.Errorf("researchtui run: no session id in %q", line)
	}
	show := exec.Command(bin, "sessions", "show", "--json", first.SessionID)
	show.Env = env
	detail, err := show.Output()
	if err != nil {
		return result{}, fmt.Errorf("researchtui sessions show: %v", err)
	}
	var d struct {
		Sources  []struct{ N int } `json:"sources"`
		Versions []struct {
			Report string `json:"report"`
		} `json:"versions"`
	}
	if err := json.Unmarshal(detail, &d); err != nil || len(d.Versions) == 0 {
		return result{}, fmt.Errorf("researchtui sessions show: no report (%v)", err)
	}
	listed := map[int]bool{}
	for _, s := range d.Sources {
		listed[s.N] = true
	}
	body, _, _ := strings.Cut(d.Versions[len(d.Versions)-1].Report, "\n## References")
	return citations(body, listed), nil
}

var citation = regexp.MustCompile(`\[(\d+)\]`)

// citations counts the distinct listed sources a report's body cites, and
// its citations that name no listed source.
func citations(body string, listed map[int]bool) result {
	var r result
	seen := map[int]bool{}
	for _, m := range citation.FindAllStringSubmatch(body, -1) {
		n, _ := strconv.Atoi(m[1])
		switch {
		case !listed[n]:
			r.bogus++
		case !seen[n]:
			seen[n] = true
			r.cited++
		}
	}
	return r
}

// runPeer asks the peer's SSE API for one research and reads the final
// report from its stream. The peer closes the stream before it sends its
// "final-report end" event, so the report is gathered from the text
// messages inside <final-report>, and its list of sources rebuilt as the
// peer builds it: the search tasks' sources, first occurrence of each URL.
func runPeer(url string, q question) (result, error) {
	body, _ := json.Marshal(map[string]any{
		"query": q.text, "provider": "ollama", "thinkingModel": chatModel, "taskModel": chatModel,
		"searchProvider": "searxng", "language": "en-US", "maxResult": 5,
		"enableCitationImage": false, "enableReferences": true,
	})
	resp, err := http.Post(url, "application/json", bytes.NewReader(body))
	if err != nil {
		return result{}, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return result{}, fmt.Errorf("peer: %s", resp.Status)
	}
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(make([]byte, 1<<20), 16<<20)
	var text strings.Builder
	urls := map[string]bool{}
	event := ""
	for sc.Scan() {
		line := sc.Text()
		if ev, ok := strings.CutPrefix(line, "event: "); ok {
			event = ev
			continue
		}
		data, ok := strings.CutPrefix(line, "data: ")
		if !ok {
			continue
		}
		// The peer writes each payload followed by ")}" (sic).
		data = strings.TrimSuffix(data, ")}")
		var p struct {
			Step, Status, Text, Message string
			Data                        struct {
				Sources []struct{ URL string }
			}
		}
		if json.Unmarshal([]byte(data), &p) != nil {
			continue
		}
		switch event {
		case "error":
			return result{}, fmt.Errorf("peer: %s", p.Message)
		case "message":
			text.WriteString(p.Text)
		case "progress":
			if p.Step == "search-task" && p.Status == "end" {
				for _, s := range p.Data.Sources {
					urls[s.URL] = true
				}
			}
		}
	}
	_, report, ok := strings.Cut(text.String(), "<final-report>\n")
	if !ok {
		return result{}, fmt.Errorf("peer: the stream ended without a final report (%v)", sc.Err())
	}
	report, _, _ = strings.Cut(report, "\n</final-report>")
	listed := map[int]bool{}
	for i := range len(urls) {
		listed[i+1] = true
	}
	return citations(report, listed), nil
}
