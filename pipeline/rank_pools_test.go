package pipeline_test

import (
	"github.com/researchtui/researchtui/pipeline/eval"
	"github.com/researchtui/researchtui/pipeline/pipelinetest"
)

// The pool questions (eval.PoolQuestions) as ranking cases: the question
// and its on-topic papers come from pipeline/eval, the topics are what a
// planner model would write for them (Broad being one or two words). Each
// is asked over its own recorded pool (eval.EditDistanceWorld,
// eval.KubernetesWorld, eval.TuringPage2World), not over the "turing"
// pool runRankCase serves. The Kubernetes and turing-2 cases are held out
// from tests: only benchmarks run them.

var editDistance1Case = evalCase("edit-distance", "edit distance sublinear", eval.EditDistanceQ1, "gap edit distance",
	pipelinetest.Topic{Question: "Which sublinear-time algorithms solve the gap edit distance problem?", Strict: "sublinear time gap edit distance algorithm", Moderate: "sublinear edit distance", Broad: "edit distance"},
	pipelinetest.Topic{Question: "What query complexity lower bounds are known for approximating edit distance?", Strict: "edit distance approximation query complexity lower bound", Moderate: "edit distance lower bound", Broad: "edit distance"},
)

var editDistance2Case = evalCase("edit-distance", "approximate string matching", eval.EditDistanceQ2, "approximate string matching",
	pipelinetest.Topic{Question: "Which algorithms and filters find patterns within a few edits in a text?", Strict: "approximate string matching algorithm k errors", Moderate: "approximate pattern matching", Broad: "string matching"},
	pipelinetest.Topic{Question: "How do indexes speed up similarity search under edit distance in name databases and sequence data?", Strict: "index similarity search edit distance", Moderate: "approximate string search index", Broad: "string search"},
)

var kubernetes1Case = evalCase("kubernetes", "kubernetes predictive autoscaling", eval.KubernetesQ1, "predictive autoscaling",
	pipelinetest.Topic{Question: "How do workload forecasting models make Kubernetes pod autoscaling proactive?", Strict: "Kubernetes proactive autoscaling workload prediction", Moderate: "Kubernetes predictive autoscaling", Broad: "autoscaling"},
	pipelinetest.Topic{Question: "How do machine-learning autoscalers compare with the default Horizontal Pod Autoscaler?", Strict: "machine learning Horizontal Pod Autoscaler comparison", Moderate: "Horizontal Pod Autoscaler", Broad: "pod autoscaling"},
)

var kubernetes2Case = evalCase("kubernetes", "kubernetes security", eval.KubernetesQ2, "Kubernetes security",
	pipelinetest.Topic{Question: "Which security misconfigurations occur in Kubernetes manifests and Helm charts?", Strict: "Kubernetes manifests Helm charts security misconfigurations", Moderate: "Kubernetes security misconfiguration", Broad: "Kubernetes security"},
	pipelinetest.Topic{Question: "What tools and attacks show the security risks of Kubernetes clusters and their CI/CD pipelines?", Strict: "Kubernetes cluster attack detection tool", Moderate: "Kubernetes attacks", Broad: "container security"},
)

var turing2Case1 = evalCase("turing-2", "turing test variants", eval.TuringPage2Q1, "Turing test",
	pipelinetest.Topic{Question: "How has the Turing test been adapted for game bots and creative software?", Strict: "Turing test game bots creativity music art", Moderate: "Turing test creativity", Broad: "Turing test"},
	pipelinetest.Topic{Question: "What are the limits of the Turing test as a measure of machine intelligence?", Strict: "Turing test limits machine intelligence", Moderate: "imitation game intelligence", Broad: "Turing test"},
)

var turing2Case2 = evalCase("turing-2", "turing patterns", eval.TuringPage2Q2, "Turing patterns",
	pipelinetest.Topic{Question: "What conditions produce a Turing instability in reaction-diffusion systems?", Strict: "Turing instability reaction-diffusion conditions", Moderate: "Turing instability", Broad: "Turing patterns"},
	pipelinetest.Topic{Question: "Where have Turing patterns been observed in chemical reactions and living organisms?", Strict: "Turing patterns chemical reaction experiment morphogenesis", Moderate: "Turing pattern observation", Broad: "morphogenesis"},
)

// poolCases are the six pool questions as ranking cases.
var poolCases = []rankCase{editDistance1Case, editDistance2Case, kubernetes1Case, kubernetes2Case, turing2Case1, turing2Case2}
