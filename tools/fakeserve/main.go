// Command fakeserve starts the test fakes — an Ollama-protocol server driven
// by the scripted research model, and arXiv/OpenAlex servers replaying real
// recorded responses — and prints the environment that points researchtui
// at them. It is for trying the program by hand without Ollama or network:
//
//	eval "$(go run ./tools/fakeserve -delay 20ms &)"   # or copy the exports
//	go run ./tools/fakeserve -world real -pdf ../shared/fixtures/pdf/arxiv-1111.2011v2.pdf
//	researchtui run "how is software testing studied?"
package main

import (
	"flag"
	"fmt"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/researchtui/researchtui/llm/ollamafake"
	"github.com/researchtui/researchtui/pipeline/pipelinetest"
	"github.com/researchtui/researchtui/search/sourcefake"
)

func main() {
	delay := flag.Duration("delay", 15*time.Millisecond, "simulated generation time per streamed token")
	rounds := flag.Int("revision-rounds", 1, "review rounds that ask for revisions before approving")
	fresh := flag.Bool("fresh", false, "start with no models installed (they can be pulled), like a new Ollama")
	world := flag.String("world", "", `"real": the world users live in: 20 ms a token, 300 ms to the first, one request at a time, answers as long as an 8B model's, APIs at 300 ms, arXiv's 3 s spacing, PDFs in 0.8 s (set -pdf)`)
	gaps := flag.Bool("gaps", false, `a model that keeps reporting a gap ("open problems"): follow-up rounds search for it (their queries find other recorded papers) and chase citations`)
	pdfPath := flag.String("pdf", "", "a PDF served for every arXiv paper (e.g. ../shared/fixtures/pdf/arxiv-1111.2011v2.pdf); needs RESEARCHTUI_ALLOW_PRIVATE_FETCH=1")
	careless := flag.Bool("careless", false, "a writer that cites the neighbouring source every third sentence and adds sweeping claims (the verifier repairs them)")
	paraphrase := flag.Bool("paraphrase", false, "with -careless: the writer restates findings in other words (the verifier asks the model)")
	grow := flag.Bool("grow", false, "on SIGUSR1 (kill -USR1 PID), OpenAlex answers gain two works published since the recording: a living review's update finds them")
	pool := flag.String("pool", "", `Semantic Scholar ranks this recorded pool by each query and honours the limit, as the real API does ("turing", "turing-2", "edit-distance", "kubernetes"); unset, it answers the "turing" page whole`)
	screen := flag.String("screen", "", `how the model's relevance screen answers: "" every candidate on topic (no judgement), "random", "junk", "reject-all"`)
	flag.Parse()
	script := &pipelinetest.Script{RevisionRounds: *rounds, Careless: *careless, Paraphrase: *paraphrase}
	switch *screen {
	case "":
	case "random":
		script.Screen = &pipelinetest.ScreenScript{Random: true}
	case "junk":
		script.Screen = &pipelinetest.ScreenScript{Junk: true}
	case "reject-all":
		script.Screen = &pipelinetest.ScreenScript{RejectAll: true}
	default:
		fmt.Fprintf(os.Stderr, "-screen %q: want random, junk or reject-all\n", *screen)
		os.Exit(2)
	}
	if _, ok := sourcefake.Pools[*pool]; *pool != "" && !ok {
		fmt.Fprintf(os.Stderr, "-pool %q: want turing, turing-2, edit-distance or kubernetes\n", *pool)
		os.Exit(2)
	}
	opt := ollamafake.Options{Responder: script.Responder(), TokenDelay: *delay}
	if *gaps {
		script.MissingSlot = "open problems"
		script.GapQueries = []string{"del_maestro luttinger liquids", "1111.2011 bethe lattice"}
	}
	var srcOpt sourcefake.Options
	if *world == "real" {
		opt.TokenDelay, opt.FirstTokenDelay, opt.Parallel, opt.EmbedDelay = 20*time.Millisecond, 300*time.Millisecond, 1, 50*time.Millisecond
		script.Realistic = true
		srcOpt = sourcefake.Options{Latency: 300 * time.Millisecond, ArxivSpacing: 3 * time.Second, DocLatency: 800 * time.Millisecond}
	}
	srcOpt.Pool = *pool
	if *pdfPath != "" {
		b, err := os.ReadFile(*pdfPath)
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(2)
		}
		srcOpt.PDF = b
	}
	if *fresh {
		opt.Models, opt.Pullable = map[string]ollamafake.Model{}, ollamafake.DefaultModels()
	}
	oll := ollamafake.New(opt)
	defer oll.Close()
	src := sourcefake.NewWith(srcOpt)
	defer src.Close()
	fmt.Printf("export OLLAMA_HOST=%s\n", oll.URL)
	fmt.Printf("export RESEARCHTUI_ARXIV_URL=%s\n", src.ArxivURL())
	fmt.Printf("export RESEARCHTUI_OPENALEX_URL=%s\n", src.OpenAlexURL())
	fmt.Printf("export RESEARCHTUI_SEMANTICSCHOLAR_URL=%s\n", src.SemanticScholarURL())
	fmt.Printf("export RESEARCHTUI_PUBMED_URL=%s\n", src.PubMedURL())
	fmt.Printf("export RESEARCHTUI_CROSSREF_URL=%s\n", src.CrossrefURL())
	if srcOpt.PDF != nil {
		fmt.Println("export RESEARCHTUI_ALLOW_PRIVATE_FETCH=1")
	}
	fmt.Fprintln(os.Stderr, "fakes running; Ctrl-C stops them")
	sig := make(chan os.Signal, 1)
	signal.Notify(sig, os.Interrupt, syscall.SIGTERM, syscall.SIGUSR1)
	for s := range sig {
		if s != syscall.SIGUSR1 {
			return
		}
		if *grow {
			growWorld(src)
			fmt.Fprintln(os.Stderr, "two new works published")
		}
	}
}

// growWorld publishes two works on the fakes' topics (software testing,
// language models with chemistry tools) after the recording.
func growWorld(src *sourcefake.Server) {
	src.AddOpenAlexWork("W9000000001", "10.9999/new.2026.001", "Property-based software testing techniques in industrial practice", 2026, "Bo Checker", "Journal of Software Testing",
		"Property-based testing is a software testing technique that checks invariants on generated inputs. Teams adopting it found subtle bugs that unit tests missed and reported lower maintenance cost.")
	src.AddOpenAlexWork("W9000000002", "10.9999/new.2026.002", "Language models with laboratory tools for chemistry automation", 2026, "Cara Chemist", "Digital Discovery",
		"Language models given laboratory tools automate chemistry experiments. The models planned and ran syntheses with few human corrections.")
}
