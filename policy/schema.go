package policy

import (
	"errors"
	"fmt"
	"iter"
	"strconv"
	"sync"

	cedar "github.com/cedar-policy/cedar-go"
	"github.com/cedar-policy/cedar-go/types"
	xast "github.com/cedar-policy/cedar-go/x/exp/ast"
	"github.com/cedar-policy/cedar-go/x/exp/schema"
	"github.com/cedar-policy/cedar-go/x/exp/schema/validate"
)

// SchemaText is the Cedar schema every policy set is validated against. It
// is the single source of truth for which entity types, attributes and
// actions a policy may mention; entities built by this package follow it
// exactly. ("type" is quoted because it is a keyword of the schema grammar.)
const SchemaText = `
entity Agent {
  orgId: String,
  projectIds: Set<String>,
  role: String,
};

entity GraphNode {
  orgId: String,
  projectId: String,
  "type": String,
};

entity Observation {
  orgId: String,
  projectId: String,
  "type": String,
};

action "read", "write" appliesTo {
  principal: Agent,
  resource: [GraphNode, Observation],
  context: { projectId?: String },
};
`

// DefaultPolicies is the policy set a kgctx deployment starts with.
//
// isEmpty() is supported by cedar-go v1.9.0 (parser and evaluator), so the
// "empty projectIds means every project" rule is written directly instead of
// through a derived boolean attribute. Nothing here mentions role: tenant
// isolation applies to every role, operators included.
const DefaultPolicies = `// Tenant isolation: an agent reads a graph node or an observation only
// inside its own org, and only in a project it is scoped to. An agent with no
// project scope (empty projectIds) reads every project of its org.
@id("tenant-read")
permit (
  principal is Agent,
  action == Action::"read",
  resource
)
when {
  principal.orgId == resource.orgId &&
  (principal.projectIds.isEmpty() ||
   principal.projectIds.contains(resource.projectId))
};
`

// policySet is one immutable, validated generation of policies. Requests pin
// a *policySet, so nothing in it may change after compile returns.
type policySet struct {
	text    string
	version uint64
	ids     []cedar.PolicyID
	list    []*cedar.Policy
	// idFree says that no policy can tell two resources of one kind and
	// attribute record apart (resourceIDFree): a Request decides such
	// resources once.
	idFree bool
	// records memoises resource attribute records across the set's
	// Requests (a record is immutable; building one hashes and clones a
	// map), up to maxSetRecords of them.
	recMu   sync.RWMutex
	records map[recordKey]types.Record
	// all is built once so that handing the set to cedar.Authorize (which
	// wants a PolicyIterator) costs no closure allocation per decision.
	all iter.Seq2[cedar.PolicyID, *cedar.Policy]
}

// All implements cedar.PolicyIterator.
func (s *policySet) All() iter.Seq2[cedar.PolicyID, *cedar.Policy] { return s.all }

// compile parses text and validates every policy against SchemaText. The
// returned error wraps ErrInvalidPolicy and the parser's or validator's
// error (with line and column).
func compile(text string, version uint64) (*policySet, error) {
	list, err := cedar.NewPolicyListFromBytes("policy.cedar", []byte(text))
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrInvalidPolicy, err)
	}
	v, err := newValidator()
	if err != nil {
		// The schema is a constant; this only fires if cedar-go changes
		// under us. Fail closed: no schema, no new policies.
		return nil, fmt.Errorf("%w: schema: %w", ErrInvalidPolicy, err)
	}
	s := &policySet{text: text, version: version, ids: make([]cedar.PolicyID, len(list)), list: list}
	seen := make(map[cedar.PolicyID]bool, len(list))
	var errs []error
	for i, p := range list {
		id := cedar.PolicyID("policy" + strconv.Itoa(i))
		if name, ok := p.Annotations()["id"]; ok {
			id = cedar.PolicyID(name)
		}
		pos := p.Position()
		if seen[id] {
			errs = append(errs, fmt.Errorf("policy %q at line %d, column %d: duplicate @id", id, pos.Line, pos.Column))
		}
		seen[id] = true
		s.ids[i] = id
		// cedar.Policy.AST returns the public ast.Policy, a defined type over
		// x/exp/ast.Policy, which is what the validator takes. The empty id
		// stops it prefixing every message with the id we add ourselves.
		if verr := v.Policy("", (*xast.Policy)(p.AST())); verr != nil {
			errs = append(errs, fmt.Errorf("policy %q at line %d, column %d: %w", id, pos.Line, pos.Column, verr))
		}
	}
	if len(errs) > 0 {
		return nil, fmt.Errorf("%w: %w", ErrInvalidPolicy, errors.Join(errs...))
	}
	s.idFree = resourceIDFree(list)
	s.all = func(yield func(cedar.PolicyID, *cedar.Policy) bool) {
		for i, p := range s.list {
			if !yield(s.ids[i], p) {
				return
			}
		}
	}
	return s, nil
}

// maxSetRecords bounds policySet.records (a few hundred bytes each).
const maxSetRecords = 1 << 14

// record returns the attribute record of a resource of org, project and
// type (resourceAttrs), built once per set.
func (s *policySet) record(org, project, typ string) types.Record {
	k := recordKey{org: org, project: project, typ: typ}
	s.recMu.RLock()
	rec, ok := s.records[k]
	s.recMu.RUnlock()
	if ok {
		return rec
	}
	rec = resourceAttrs(org, project, typ)
	s.recMu.Lock()
	if s.records == nil {
		s.records = map[recordKey]types.Record{}
	}
	if len(s.records) < maxSetRecords {
		s.records[k] = rec
	}
	s.recMu.Unlock()
	return rec
}

// resourceIDFree reports whether no policy of list reads a resource's
// entity id. A resource entity is its id and its attribute record, with no
// parents and no tags, so a policy reads the id only through its resource
// scope (==, in, is ... in) or through the resource variable used other
// than as the operand of an attribute access, a has test or a plain is test
// (resource == X, resource in X, [resource].contains(...)). When none does,
// two resources of one kind and record get one decision. Anything the
// walk does not recognise counts as reading the id: the answer errs only
// towards deciding every resource.
func resourceIDFree(list []*cedar.Policy) bool {
	for _, p := range list {
		a := (*xast.Policy)(p.AST())
		switch a.Resource.(type) {
		case xast.ScopeTypeAll, xast.ScopeTypeIs:
		default:
			return false
		}
		reads := false
		for _, c := range a.Conditions {
			xast.Inspect(xast.NewNode(c.Body), func(n xast.IsNode) bool {
				switch n := n.(type) {
				case xast.NodeTypeAccess:
					return !isResource(n.Arg)
				case xast.NodeTypeHas:
					return !isResource(n.Arg)
				case xast.NodeTypeIs:
					return !isResource(n.Left)
				case xast.NodeTypeVariable:
					reads = reads || n.Name == "resource"
				}
				return true
			})
		}
		if reads {
			return false
		}
	}
	return true
}

// isResource reports whether n is the resource variable.
func isResource(n xast.IsNode) bool {
	v, ok := n.(xast.NodeTypeVariable)
	return ok && v.Name == "resource"
}

// newValidator resolves SchemaText and returns a strict validator. It is
// rebuilt per compile (policy changes are rare) so no validator state is
// ever shared between goroutines.
func newValidator() (*validate.Validator, error) {
	var s schema.Schema
	s.SetFilename("kgctx.cedarschema")
	if err := s.UnmarshalCedar([]byte(SchemaText)); err != nil {
		return nil, err
	}
	r, err := s.Resolve()
	if err != nil {
		return nil, err
	}
	return validate.New(r, validate.WithStrict()), nil
}
