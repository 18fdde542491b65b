package policy_test

import (
	"fmt"

	"github.com/kgctx/kgctx/policy"
)

func Example() {
	pep, err := policy.New(policy.DefaultPolicies)
	if err != nil {
		panic(err)
	}
	me := policy.Identity{AgentID: "agent-7", OrgID: "acme", Role: policy.RoleAgent, ProjectIDs: []string{"web"}}

	// One Request per prompt assembly: it pins the policy set and caches
	// decisions by the caller's key (here a dense node id).
	req := pep.NewRequest(me, policy.VerbRead)
	defer req.Release()
	nodes := []policy.Resource{
		{Kind: policy.GraphNode, ID: "n1", OrgID: "acme", ProjectID: "web", Type: "function"},
		{Kind: policy.GraphNode, ID: "n2", OrgID: "acme", ProjectID: "billing"},
		{Kind: policy.Observation, ID: "o1", OrgID: "globex", ProjectID: "web"},
	}
	for i, n := range nodes {
		fmt.Println(n.ID, req.Allow(uint64(i), n))
	}
	fmt.Println(req.Allow(0, nodes[0])) // cache hit
	checks, hits := req.Stats()
	fmt.Println(checks, hits, req.Err())
	// Output:
	// n1 true
	// n2 false
	// o1 false
	// true
	// 4 1 <nil>
}
