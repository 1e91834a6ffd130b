package eval

// The worlds of the pool questions: recorded Semantic Scholar search
// answers (worlds/ATTRIBUTION.md).
const (
	// EditDistanceWorld is the recorded answer for "sublinear near
	// optimal edit distance" (85 papers: the whole answer).
	EditDistanceWorld = "semanticscholar-edit-distance"
	// KubernetesWorld is the recorded first page for "kubernetes"
	// (100 papers).
	KubernetesWorld = "semanticscholar-kubernetes"
	// TuringPage2World is the recorded second page for "turing"
	// (offset 100, 100 papers), recorded in 2023 and so not the
	// continuation of TuringWorld's first page.
	TuringPage2World = "semanticscholar-turing-2"
)

// EditDistanceQ1: 8 on-topic papers, all with an abstract. Distractors:
// "sublinear" in other senses (sublinear regret, sublinear parallel time
// on a PRAM, sublinear space in streams, sublinear query time of oracles,
// truly sublinear LIS) and edit distance in other models (quantum,
// dynamic, compressed, Dyck, graph edit distance).
var EditDistanceQ1 = Question{
	ID:    "edit-distance-1",
	Text:  "What sublinear-time algorithms approximate the edit distance between two strings (the gap edit distance problem), and how close do they come to the known lower bounds?",
	World: EditDistanceWorld,
	OnTopic: []string{
		"near-optimal sublinear time algorithms for ulam distance", "almost-optimal sublinear-time edit distance",
		"gap edit distance via non-adaptive queries", "a simple sublinear algorithm for gap edit distance",
		"sublinear algorithms for gap edit distance", "faster sublinear-time edit distance",
		"the smoothed complexity of edit distance", "new sublinear methods in the struggle against",
	},
}

// EditDistanceQ2: 11 on-topic records under 10 prefixes, 9 of them with
// an abstract and 2 known by title only. They are 9 distinct works: the
// journal and conference versions of "Bidirectional String Anchors" share
// one prefix, and "A Comparative Performance Analysis of Approximate
// String Matching" is recorded a second time under a garbled title
// ("Fig-1: Locate all occurrence…"), which has its own prefix.
// Distractors: approximating the edit distance of two strings (the
// theory papers of EditDistanceQ1: "approximate" in the other sense),
// sketches, nearest-neighbour search in Euclidean space, alignment by
// colinear chaining, trace reconstruction, document exchange and
// synchronization codes.
var EditDistanceQ2 = Question{
	ID:    "edit-distance-2",
	Text:  "What algorithms, filters and indexes speed up approximate string matching, finding words or patterns within a few edits in text, name databases and biological sequences?",
	World: EditDistanceWorld,
	OnTopic: []string{
		"taxamatch, an algorithm for near", "bit-parallel witnesses and their applications",
		"fast online and index-based algorithms for approximate search", "a comparative performance analysis of approximate string matching",
		"fig-1: locate all occurrence of the pattern", "famous: fast approximate string matching",
		"new models and algorithms for multidimensional approximate pattern matching", "a smart filtering system for newly coined profanities",
		"bidirectional string anchors", "sequence distance embeddings",
	},
}

// KubernetesQ1: 10 on-topic papers, 9 with an abstract (K-AGRUED is
// known by title only). Distractors, all about Kubernetes too:
// autoscaling without learning (rule-based, traffic-aware, QoS-aware HPA,
// HTCondor pools), machine learning that predicts something else (Bi-LSTM
// fault prediction, runtime prediction for CPU/GPU scheduling,
// learning-based scheduling), and "proactive" fault tolerance.
var KubernetesQ1 = Question{
	ID:    "kubernetes-1",
	Text:  "How can machine learning (forecasting the workload, predicting performance, or learning a scaling policy) make Kubernetes pod autoscaling proactive and better than the default Horizontal Pod Autoscaler?",
	World: KubernetesWorld,
	OnTopic: []string{
		"ahpa: adaptive horizontal pod autoscaling", "toward optimal load prediction and customizable autoscaling",
		"proactive horizontal pod autoscaling in kubernetes using bi-lstm", "machine learning-based scaling management for kubernetes",
		"deep learning based resource forecasting for 5g core", "kapetánios: automated kubernetes adaptation",
		"autoscaling based on response time prediction", "distributed resource autoscaling in kubernetes edge clusters",
		"reinforcement learning based autoscaling for kafka-centric", "k-agrued: a container autoscaling technique",
	},
}

// KubernetesQ2: 8 on-topic papers, all with an abstract. Distractors,
// all about Kubernetes too: configuration management (GitOps, operators,
// reconciliation), anomaly detection for monitoring, fault tolerance,
// CI/CD and DevOps pipelines without a security question, and papers that
// name security only in passing.
var KubernetesQ2 = Question{
	ID:    "kubernetes-2",
	Text:  "What security risks and misconfigurations affect Kubernetes deployments (manifests, Helm charts, secrets, CI/CD pipelines), and what tools detect or mitigate them?",
	World: KubernetesWorld,
	OnTopic: []string{
		"security misconfigurations in open source kubernetes manifests", "helm charts for kubernetes applications: evolution",
		"kubehound: detecting microservices", "secret management in managed kubernetes services",
		"stay at the helm: secure kubernetes deployments", "kub-sec, an automatic kubernetes cluster apparmor",
		"privilege escalation attack scenarios on the devops pipeline", "detection, analysis and countermeasures for container based misconfiguration",
	},
}

// TuringPage2Q1: 9 on-topic papers, 8 with an abstract ("Anthropomorphism
// and AI: Turing's much misunderstood imitation game" is known by title
// only). Distractors: "Turing test" in other senses (crowdsourced Sybil
// detection, a "Turing test for free will", a GAN paper that reports a
// visual Turing test of its samples only as an evaluation), generated
// nonsense under titles such as "Can a Machine Think? … Universal Turing
// Machine", Turing machines, biographies.
var TuringPage2Q1 = Question{
	ID:    "turing-2-1",
	Text:  "How has the Turing test been adapted to judge game bots and creative software such as art and music generators, and what are its limits as a measure of machine intelligence?",
	World: TuringPage2World,
	OnTopic: []string{
		"turing tests with turing machines", "moving beyond the turing test", "on impact and evaluation in computational creativity",
		"anthropomorphism and ai: turing", "computing machinery and intelligence", "a new design for a turing test for bots",
		"the turing test and artistic creativity", "a turing test for computer game bots", "the interrogator as critic: the turing test",
	},
}

// TuringPage2Q2: 29 on-topic papers, 16 with an abstract and 13 known by
// title only (each of those titles names Turing patterns, a Turing
// instability or bifurcation, or a Turing mechanism). Distractors: generated nonsense under titles that
// name Turing's morphogenesis paper ("A chemical basis for biological
// morphogenesis Universal Turing Machine"), Turing dynamical systems and
// the Atiyah problem, Turing patterns in a quantum fluid (not a
// reaction-diffusion system), Turing machines, the Turing test. The
// prefix "the chemical basis of morphogenesis" (Turing, 1952) also
// matches one of the nonsense records, whose title begins with it: no
// prefix can tell them apart.
var TuringPage2Q2 = Question{
	ID:    "turing-2-2",
	Text:  "What conditions make reaction-diffusion systems form Turing patterns, and where have such patterns been produced or observed in chemical reactions and living organisms?",
	World: TuringPage2World,
	OnTopic: []string{
		// with an abstract
		"turing's model for biological pattern formation", "turing's theory of morphogenesis of 1952", "nonlinear effects on turing patterns",
		"stochastic turing patterns on a network", "unstable subsystems cause turing instability", "turing patterns and apparent competition in predator-prey",
		"experimental evidence of a sustained standing turing-type", "tomography of reaction-diffusion microemulsions",
		"interactions between zebrafish pigment cells", "control of the hopf-turing transition",
		"turing instability and wave patterns for a symmetric discrete", "effects of cross diffusion on turing bifurcations",
		"the chemical basis of morphogenesis", "fluctuation-driven turing patterns",
		"an experimental design method leading to chemical turing patterns", "stochastic turing patterns in the brusselator",
		// known by title only
		"dispersal-induced destabilization of metapopulations", "instability of turing patterns in reaction-diffusion-ode",
		"periodic stripe formation by a turing-mechanism", "turing patterns from dynamics of early hiv",
		"turing instability and traveling fronts", "turing patterns in development: what about the horse",
		"turing instabilities and spatio-temporal chaos", "turing instabilities in a mathematical model for signaling",
		"the dynamics of turing patterns", "turing patterns in network-organized activator",
		"dynamics of cdc42 network embodies a turing", "transition from a uniform state to hexagonal and striped turing",
		"instabilities in spatially extended predator-prey systems",
	},
}

// PoolQuestions are the questions over the recorded pools above, two a
// pool, each chosen so that its pool holds many papers that share its
// words but are about something else. They were labelled by hand from the
// recordings: every paper's title and abstract was read and judged on or
// off topic as a scholar answering the question would judge it; a paper
// without an abstract is on topic only when its title alone makes that
// clear; a borderline paper is left off. Each entry is a lower-case
// prefix of one recorded title (or of a work's two versions). No key
// facts are given (Facts is nil).
//
// The Kubernetes and turing-2 questions are held out: no test uses them,
// only benchmarks, so that the pipeline is not tuned to them. The
// edit-distance questions may be used by tests. None of them is in Sets.
var PoolQuestions = []Question{EditDistanceQ1, EditDistanceQ2, KubernetesQ1, KubernetesQ2, TuringPage2Q1, TuringPage2Q2}
