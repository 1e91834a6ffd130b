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

var editDistance1Case = rankCase{
	pool:     "edit-distance",
	name:     "edit distance sublinear",
	question: eval.EditDistanceQ1.Text,
	topics: []pipelinetest.Topic{
		{Question: "Which sublinear-time algorithms solve the gap edit distance problem?", Strict: "sublinear time gap edit distance algorithm", Moderate: "sublinear edit distance", Broad: "edit distance"},
		{Question: "What query complexity lower bounds are known for approximating edit distance?", Strict: "edit distance approximation query complexity lower bound", Moderate: "edit distance lower bound", Broad: "edit distance"},
	},
	canonical: "gap edit distance",
	onTopic:   eval.EditDistanceQ1.OnTopic,
}

var editDistance2Case = rankCase{
	pool:     "edit-distance",
	name:     "approximate string matching",
	question: eval.EditDistanceQ2.Text,
	topics: []pipelinetest.Topic{
		{Question: "Which algorithms and filters find patterns within a few edits in a text?", Strict: "approximate string matching algorithm k errors", Moderate: "approximate pattern matching", Broad: "string matching"},
		{Question: "How do indexes speed up similarity search under edit distance in name databases and sequence data?", Strict: "index similarity search edit distance", Moderate: "approximate string search index", Broad: "string search"},
	},
	canonical: "approximate string matching",
	onTopic:   eval.EditDistanceQ2.OnTopic,
}

var kubernetes1Case = rankCase{
	pool:     "kubernetes",
	name:     "kubernetes predictive autoscaling",
	question: eval.KubernetesQ1.Text,
	topics: []pipelinetest.Topic{
		{Question: "How do workload forecasting models make Kubernetes pod autoscaling proactive?", Strict: "Kubernetes proactive autoscaling workload prediction", Moderate: "Kubernetes predictive autoscaling", Broad: "autoscaling"},
		{Question: "How do machine-learning autoscalers compare with the default Horizontal Pod Autoscaler?", Strict: "machine learning Horizontal Pod Autoscaler comparison", Moderate: "Horizontal Pod Autoscaler", Broad: "pod autoscaling"},
	},
	canonical: "predictive autoscaling",
	onTopic:   eval.KubernetesQ1.OnTopic,
}

var kubernetes2Case = rankCase{
	pool:     "kubernetes",
	name:     "kubernetes security",
	question: eval.KubernetesQ2.Text,
	topics: []pipelinetest.Topic{
		{Question: "Which security misconfigurations occur in Kubernetes manifests and Helm charts?", Strict: "Kubernetes manifests Helm charts security misconfigurations", Moderate: "Kubernetes security misconfiguration", Broad: "Kubernetes security"},
		{Question: "What tools and attacks show the security risks of Kubernetes clusters and their CI/CD pipelines?", Strict: "Kubernetes cluster attack detection tool", Moderate: "Kubernetes attacks", Broad: "container security"},
	},
	canonical: "Kubernetes security",
	onTopic:   eval.KubernetesQ2.OnTopic,
}

var turing2Case1 = rankCase{
	pool:     "turing-2",
	name:     "turing test variants",
	question: eval.TuringPage2Q1.Text,
	topics: []pipelinetest.Topic{
		{Question: "How has the Turing test been adapted for game bots and creative software?", Strict: "Turing test game bots creativity music art", Moderate: "Turing test creativity", Broad: "Turing test"},
		{Question: "What are the limits of the Turing test as a measure of machine intelligence?", Strict: "Turing test limits machine intelligence", Moderate: "imitation game intelligence", Broad: "Turing test"},
	},
	canonical: "Turing test",
	onTopic:   eval.TuringPage2Q1.OnTopic,
}

var turing2Case2 = rankCase{
	pool:     "turing-2",
	name:     "turing patterns",
	question: eval.TuringPage2Q2.Text,
	topics: []pipelinetest.Topic{
		{Question: "What conditions produce a Turing instability in reaction-diffusion systems?", Strict: "Turing instability reaction-diffusion conditions", Moderate: "Turing instability", Broad: "Turing patterns"},
		{Question: "Where have Turing patterns been observed in chemical reactions and living organisms?", Strict: "Turing patterns chemical reaction experiment morphogenesis", Moderate: "Turing pattern observation", Broad: "morphogenesis"},
	},
	canonical: "Turing patterns",
	onTopic:   eval.TuringPage2Q2.OnTopic,
}

// poolCases are the six pool questions as ranking cases.
var poolCases = []rankCase{editDistance1Case, editDistance2Case, kubernetes1Case, kubernetes2Case, turing2Case1, turing2Case2}
