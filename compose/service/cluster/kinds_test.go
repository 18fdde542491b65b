package cluster

import (
	"slices"
	"strings"
	"testing"

	"github.com/kgctx/kgctx/compose/service"
)

// kindsOf lists, per log version, the write kinds a binary of that
// version applies. A binary that meets a kind it does not know stalls its
// shard (version_test.go), so a new kind needs a new LogVersion: an older
// replica then stalls on the version, before it could meet the kind.
// When this test fails, raise LogVersion and add its list here; never
// edit a released version's list.
var kindsOf = map[int]string{
	2: "clear delete_node delete_observation delete_triplet enqueue feedback import in_session_config " +
		"inject_ack inject_claim injection_log lease_claim lease_refresh memory_config observations plan " +
		"policies predicates quotas recall_matrix budgets token token_revoke tool_result update_observation",
	3: "clear delete_node delete_observation delete_triplet enqueue feedback import in_session_config " +
		"inject_ack inject_claim injection_log lease_claim lease_refresh memory_config observations plan " +
		"policies predicates quotas recall_matrix budgets token token_revoke tool_result update_observation " +
		"org_copy org_fence org_unfence org_flip org_abort org_drop",
}

func TestNewKindsNeedANewVersion(t *testing.T) {
	want := strings.Fields(kindsOf[LogVersion])
	slices.Sort(want)
	if got := service.Kinds(); !slices.Equal(got, want) {
		t.Fatalf("log version %d applies %q, but this binary applies %q: a kind added or removed needs LogVersion raised and its list added to kindsOf", LogVersion, want, got)
	}
	for _, k := range want {
		if !service.KnownKind(k) {
			t.Errorf("KnownKind(%q) = false", k)
		}
	}
}
