package policy

import (
	"fmt"

	cedar "github.com/cedar-policy/cedar-go"
	"github.com/cedar-policy/cedar-go/types"
)

// Kind is the Cedar entity type of a Resource. The zero Kind is invalid on
// purpose: a Resource whose Kind was never set is denied, not silently
// treated as a GraphNode.
type Kind uint8

const (
	// GraphNode is a node of the knowledge graph: GraphNode::"<nodeId>".
	GraphNode Kind = iota + 1
	// Observation is a recorded observation: Observation::"<id>".
	Observation
)

// String returns the Cedar entity type name, or "Kind(n)" for invalid kinds.
func (k Kind) String() string {
	if et, ok := k.entityType(); ok {
		return string(et)
	}
	return fmt.Sprintf("Kind(%d)", uint8(k))
}

func (k Kind) entityType() (types.EntityType, bool) {
	switch k {
	case GraphNode:
		return typeGraphNode, true
	case Observation:
		return typeObservation, true
	}
	return "", false
}

// Roles an Identity may carry. Policies see it as principal.role; the
// default policy ignores it (tenant isolation binds every role).
const (
	RoleAgent    = "agent"
	RoleImporter = "importer"
	RoleOrgAdmin = "org_admin"
	RoleOperator = "operator"
)

// Verbs understood by the PEP, mapped to Action::"read" / Action::"write".
const (
	VerbRead  = "read"
	VerbWrite = "write"
)

// Identity is the principal of a decision: Agent::"<AgentID>".
type Identity struct {
	AgentID string
	OrgID   string
	// Role must be one of RoleAgent, RoleImporter, RoleOrgAdmin,
	// RoleOperator; anything else (including "") is denied.
	Role string
	// ProjectIDs scopes the agent within its org. Empty (nil or zero
	// length) means every project of the org — mind this when building an
	// Identity from partial data. An empty string inside it is invalid.
	ProjectIDs []string
	// SessionProjectID is the project of the requesting session, exposed to
	// policies as the optional context.projectId; "" leaves it absent.
	SessionProjectID string
}

// Resource is what is being accessed: GraphNode::"<ID>" or
// Observation::"<ID>". ID and OrgID are required. ProjectID may be ""
// (an org-level resource: under the default policy only agents without a
// project scope see it); Type may be "".
type Resource struct {
	Kind      Kind
	ID        string
	OrgID     string
	ProjectID string
	Type      string
}

// Cedar names, kept in package variables so the hot path never converts or
// concatenates strings.
var (
	typeAgent       = types.EntityType("Agent")
	typeGraphNode   = types.EntityType("GraphNode")
	typeObservation = types.EntityType("Observation")
	actionRead      = types.NewEntityUID("Action", VerbRead)
	actionWrite     = types.NewEntityUID("Action", VerbWrite)

	attrOrgID      = types.String("orgId")
	attrProjectIDs = types.String("projectIds")
	attrRole       = types.String("role")
	attrProjectID  = types.String("projectId")
	attrType       = types.String("type")
)

func actionFor(verb string) (types.EntityUID, error) {
	switch verb {
	case VerbRead:
		return actionRead, nil
	case VerbWrite:
		return actionWrite, nil
	}
	return types.EntityUID{}, fmt.Errorf("%w: %q", ErrUnknownVerb, verb)
}

// principal checks id and builds the Agent entity and the request context.
// It runs once per Request, so it may allocate.
func principal(id Identity) (types.Entity, types.Record, error) {
	switch {
	case id.AgentID == "":
		return types.Entity{}, types.Record{}, fmt.Errorf("%w: empty agent id", ErrInvalidIdentity)
	case id.OrgID == "":
		return types.Entity{}, types.Record{}, fmt.Errorf("%w: agent %q has no org", ErrInvalidIdentity, id.AgentID)
	}
	switch id.Role {
	case RoleAgent, RoleImporter, RoleOrgAdmin, RoleOperator:
	default:
		return types.Entity{}, types.Record{}, fmt.Errorf("%w: agent %q has unknown role %q", ErrInvalidIdentity, id.AgentID, id.Role)
	}
	projects := make([]types.Value, len(id.ProjectIDs))
	for i, pid := range id.ProjectIDs {
		if pid == "" {
			return types.Entity{}, types.Record{}, fmt.Errorf("%w: agent %q has an empty project id", ErrInvalidIdentity, id.AgentID)
		}
		projects[i] = types.String(pid)
	}
	e := types.Entity{
		UID: types.NewEntityUID(typeAgent, types.String(id.AgentID)),
		Attributes: types.NewRecord(types.RecordMap{
			attrOrgID:      types.String(id.OrgID),
			attrProjectIDs: types.NewSet(projects...),
			attrRole:       types.String(id.Role),
		}),
	}
	var ctx types.Record
	if id.SessionProjectID != "" {
		ctx = types.NewRecord(types.RecordMap{attrProjectID: types.String(id.SessionProjectID)})
	} else {
		ctx = types.NewRecord(nil)
	}
	return e, ctx, nil
}

// resourceUID checks r and returns its entity UID.
func resourceUID(r Resource) (types.EntityUID, error) {
	et, ok := r.Kind.entityType()
	switch {
	case !ok:
		return types.EntityUID{}, fmt.Errorf("%w: invalid kind %v", ErrInvalidResource, r.Kind)
	case r.ID == "":
		return types.EntityUID{}, fmt.Errorf("%w: empty %v id", ErrInvalidResource, r.Kind)
	case r.OrgID == "":
		return types.EntityUID{}, fmt.Errorf("%w: %v %q has no org", ErrInvalidResource, r.Kind, r.ID)
	}
	return types.NewEntityUID(et, types.String(r.ID)), nil
}

// resourceAttrs builds the attribute record of a resource. Records are
// immutable in cedar-go and NewRecord hashes and clones its map, so this is
// the expensive part of a cache miss; a policy set memoises it per
// attribute tuple (policySet.record).
func resourceAttrs(orgID, projectID, typ string) types.Record {
	return types.NewRecord(types.RecordMap{
		attrOrgID:     types.String(orgID),
		attrProjectID: types.String(projectID),
		attrType:      types.String(typ),
	})
}

// entityPair is the types.EntityGetter handed to cedar.Authorize. A decision
// only ever involves one principal and one resource, so two comparisons
// replace building an EntityMap per decision. Any other UID (e.g. an entity
// literal in a policy) is reported missing, exactly as an EntityMap holding
// just these two entities would.
type entityPair struct {
	principal types.Entity
	resource  types.Entity
}

func (e *entityPair) Get(uid types.EntityUID) (types.Entity, bool) {
	switch uid {
	case e.principal.UID:
		return e.principal, true
	case e.resource.UID:
		return e.resource, true
	}
	return types.Entity{}, false
}

// decide runs one Cedar evaluation. Unlike plain Cedar, where an erroring
// policy is skipped (so an erroring forbid lets the request through), any
// evaluation error denies.
func decide(set *policySet, ents *entityPair, action types.EntityUID, ctx types.Record) (bool, error) {
	d, diag := cedar.Authorize(set, ents, cedar.Request{
		Principal: ents.principal.UID,
		Action:    action,
		Resource:  ents.resource.UID,
		Context:   ctx,
	})
	if len(diag.Errors) > 0 {
		e := diag.Errors[0]
		return false, fmt.Errorf("%w: policy %q at line %d, column %d: %s (and %d more)",
			ErrEvaluation, e.PolicyID, e.Position.Line, e.Position.Column, e.Message, len(diag.Errors)-1)
	}
	return d == cedar.Allow, nil
}
