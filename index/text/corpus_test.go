package text

import (
	"math/rand/v2"
	"strings"
)

// A small deterministic code-architecture corpus for tests that need a few
// thousand realistic documents: CamelCase identifiers, package paths and
// Zipf-distributed description words, so that postings lists range from a
// handful of documents to most of them. (The benchmarks use the larger
// generator of bench/workload, which index may not import.)

const (
	corpusOrg     = "o"
	corpusProject = "p"
)

var corpusFilter = Filter{Org: corpusOrg, Project: corpusProject}

var (
	corpusDomains = []string{"Payments", "Billing", "Ledger", "Auth", "Orders", "Cart", "Catalog", "Pricing",
		"Shipping", "Search", "Email", "Storage", "Reporting", "Metrics", "Audit", "Fraud", "Config", "Webhooks"}
	corpusVerbs = []string{"Parse", "Validate", "Load", "Store", "Fetch", "Build", "Render", "Apply", "Merge", "Retry", "Encode", "Decode"}
	corpusNouns = []string{"Invoice", "Line", "Token", "Session", "Order", "Item", "Price", "Refund", "Event", "Batch", "Report", "Request"}
	corpusKinds = []string{"Service", "Package", "File", "Function", "Error", "Interface"}
	corpusWords = strings.Fields(`the a of to in for and is on with handles returns stores reads writes request
	response cache timeout retry error client server queue worker handler database connection
	payment invoice ledger token session order price refund event batch report user account
	slow fails panics leaks blocks deadlock concurrent validation schema migration index lookup
	shard replica snapshot backoff circuit breaker limiter quota tenant webhook signature`)
	corpusIssues = []string{"timeout", "nil pointer", "deadlock", "slow query", "race", "leak"}
)

// corpus returns n documents and their ids 0..n-1, deterministic.
func corpus(n int) []Doc {
	r := rand.New(rand.NewPCG(7, uint64(n)))
	zipf := rand.NewZipf(r, 1.2, 1, uint64(len(corpusWords)-1))
	docs := make([]Doc, n)
	for i := range docs {
		d := corpusDomains[r.IntN(len(corpusDomains))]
		v := corpusVerbs[r.IntN(len(corpusVerbs))]
		no := corpusNouns[r.IntN(len(corpusNouns))]
		kind := corpusKinds[i%len(corpusKinds)]
		var name string
		switch kind {
		case "Service":
			name = d + "Service"
		case "Package":
			name = "pkg/" + strings.ToLower(d) + "/" + strings.ToLower(no)
		case "File":
			name = "pkg/" + strings.ToLower(d) + "/" + strings.ToLower(v+no) + ".go"
		case "Error":
			name = "Err" + no + "Invalid"
		case "Interface":
			name = no + "Store"
		default:
			name = v + d + no
		}
		words := make([]string, 6+r.IntN(14))
		for j := range words {
			words[j] = corpusWords[zipf.Uint64()]
		}
		docs[i] = Doc{ID: uint32(i), Org: corpusOrg, Project: corpusProject, Name: name, Type: strings.ToLower(kind),
			Description: strings.Join(words, " ")}
	}
	return docs
}

// corpusQueries returns n agent-like queries about documents of corpus.
func corpusQueries(docs []Doc, n int) []string {
	r := rand.New(rand.NewPCG(11, uint64(n)))
	qs := make([]string, n)
	for i := range qs {
		d := docs[r.IntN(len(docs))]
		switch i % 3 {
		case 0:
			qs[i] = "fix " + corpusIssues[r.IntN(len(corpusIssues))] + " in " + d.Name
		case 1:
			w := strings.Fields(d.Description)
			qs[i] = strings.Join(w[:min(len(w), 4)], " ")
		default:
			qs[i] = "why is " + d.Name + " slow"
		}
	}
	return qs
}
