package compose

import (
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/kgctx/kgctx/engine"
)

// A Get that misses the cache while a Set runs must not put the value it
// loaded (older) over the one the Set cached: the cache would stay stale
// until restart. Each round starts from an empty cache (a fresh Settings
// over the same store) and races one Set against one Get.
func TestSettingsNoLostUpdate(t *testing.T) {
	st, err := engine.Open("", &engine.Options{InMemory: true})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	ten := engine.Tenant{Org: "org_a", Project: "p"}
	rounds := 3000
	if testing.Short() {
		rounds = 300
	}
	stale := 0
	for i := range rounds {
		s := NewSettings(st)
		want := fmt.Sprintf("stack%d", i)
		budget := 100 + i
		var wg sync.WaitGroup
		wg.Add(4)
		go func() {
			defer wg.Done()
			if err := s.SetMemoryConfig(ten, MemoryConfig{MemoryEnabled: true, TechStack: []string{want}}); err != nil {
				t.Error(err)
			}
		}()
		go func() { defer wg.Done(); s.MemoryConfig(ten) }()
		go func() {
			defer wg.Done()
			if err := s.SetBudgets(BudgetConfig{Defaults: map[string]int{WorkBugFix: budget}}); err != nil {
				t.Error(err)
			}
		}()
		go func() { defer wg.Done(); s.Budgets() }()
		wg.Wait()
		got, err := s.MemoryConfig(ten)
		b, err2 := s.Budgets()
		if err != nil || err2 != nil {
			t.Fatal(err, err2)
		}
		if len(got.TechStack) != 1 || got.TechStack[0] != want || b.Budget("org_x", WorkBugFix) != budget {
			stale++
		}
	}
	if stale > 0 {
		t.Fatalf("the cache was left stale in %d of %d rounds", stale, rounds)
	}
}

// What Get hands out is a copy: changing it changes nothing stored or
// cached.
func TestSettingsCopiesOut(t *testing.T) {
	st, err := engine.Open("", &engine.Options{InMemory: true})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	s := NewSettings(st)
	m, _ := s.RecallMatrix()
	m.Defaults[WorkChore] = true
	m.OrgOverrides["org_a"] = map[string]bool{WorkBugFix: false}
	if again, _ := s.RecallMatrix(); again.Graph("org_a", WorkChore) || !again.Graph("org_a", WorkBugFix) {
		t.Fatalf("mutating a Get result changed the cache: %+v", again)
	}
	in := BudgetConfig{Defaults: map[string]int{WorkBugFix: 900}}
	if err := s.SetBudgets(in); err != nil {
		t.Fatal(err)
	}
	in.Defaults[WorkBugFix] = 1
	if b, _ := s.Budgets(); b.Budget("o", WorkBugFix) != 900 {
		t.Fatalf("mutating a Set argument changed the cache: %+v", b)
	}
	c, _ := s.InSessionConfig()
	c.SkipTools[0] = "Edit"
	if again, _ := s.InSessionConfig(); again.SkipTools[0] == "Edit" {
		t.Fatal("in-session config shared")
	}
	// A bad value changes nothing.
	if err := s.SetBudgets(BudgetConfig{Defaults: map[string]int{WorkBugFix: -1}}); err == nil {
		t.Fatal("negative budget accepted")
	}
	if b, _ := NewSettings(st).Budgets(); b.Budget("o", WorkBugFix) != 900 {
		t.Fatalf("stored budgets: %+v", b)
	}
}

// TestPredicateConfigLength: a vocabulary may list any relationship the
// store accepts (up to engine.DefaultMaxRelBytes, e.g. FB15k-237's 146-byte
// raw relation paths), and nothing longer.
func TestPredicateConfigLength(t *testing.T) {
	fb := "/base/schemastaging/organization_extra/phone_number./base/schemastaging/phone_sandbox/service_location"
	long := strings.Repeat("r", engine.DefaultMaxRelBytes)
	c, err := PredicateConfig{Mode: PredicatesStrict, Allowed: []string{fb, long}}.Normalize()
	if err != nil || len(c.Allowed) != 2 || c.Allowed[1] != long || c.Allowed[0] != engine.NormalizeRelationship(fb) {
		t.Fatalf("long predicates: %d kept, %v", len(c.Allowed), err)
	}
	for _, bad := range []string{long + "r", strings.Repeat("aB", engine.DefaultMaxRelBytes/2)} {
		if _, err := (PredicateConfig{Allowed: []string{bad}}).Normalize(); !errors.Is(err, ErrInvalidRequest) {
			t.Errorf("%d-byte predicate: %v, want ErrInvalidRequest", len(bad), err)
		}
	}
}

// TestSettingsDropOrg deletes an org's plan and project documents from
// the store and the cache (a fresh Settings over the store reads the
// defaults too), and nothing of another org whose id starts alike, nor
// the operator's documents.
func TestSettingsDropOrg(t *testing.T) {
	st, err := engine.Open("", &engine.Options{InMemory: true})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	s := NewSettings(st)
	for _, org := range []string{"org_a", "org_ab"} {
		for _, p := range []string{"p1", "p2"} {
			ten := engine.Tenant{Org: org, Project: p}
			if err := s.SetMemoryConfig(ten, MemoryConfig{MemoryEnabled: true, TechStack: []string{"go"}}); err != nil {
				t.Fatal(err)
			}
			if err := s.SetPredicates(ten, PredicateConfig{Mode: PredicatesStrict, Allowed: []string{"calls"}}); err != nil {
				t.Fatal(err)
			}
		}
		if err := s.SetPlan(org, OrgPlan{Features: map[string]bool{"kg_enabled": true}}); err != nil {
			t.Fatal(err)
		}
	}
	budgets := DefaultBudgets()
	budgets.Defaults["chore"] = 123
	if err := s.SetBudgets(budgets); err != nil {
		t.Fatal(err)
	}
	for _, org := range []string{"org_a", "org_ab"} {
		if ok, err := s.HasOrg(org); !ok || err != nil {
			t.Fatalf("HasOrg(%s) before the drop: %v %v", org, ok, err)
		}
	}
	if orgs, err := s.ConfiguredOrgs(); err != nil || strings.Join(orgs, ",") != "org_a,org_ab" {
		t.Fatalf("ConfiguredOrgs: %v %v", orgs, err)
	}
	if err := s.DropOrg("org_a"); err != nil {
		t.Fatal(err)
	}
	if orgs, err := s.ConfiguredOrgs(); err != nil || strings.Join(orgs, ",") != "org_ab" {
		t.Fatalf("ConfiguredOrgs after the drop: %v %v", orgs, err)
	}
	if ok, err := s.HasOrg("org_a"); ok || err != nil {
		t.Fatalf("HasOrg(org_a) after the drop: %v %v", ok, err)
	}
	for _, set := range []*Settings{s, NewSettings(st)} {
		for _, p := range []string{"p1", "p2"} {
			gone, kept := engine.Tenant{Org: "org_a", Project: p}, engine.Tenant{Org: "org_ab", Project: p}
			if m, _ := set.MemoryConfig(gone); m.MemoryEnabled != DefaultMemoryConfig.MemoryEnabled || len(m.TechStack) != 0 {
				t.Errorf("org_a's memory config after the drop: %+v", m)
			}
			if c, _ := set.Predicates(gone); c.Mode != PredicatesOpen {
				t.Errorf("org_a's vocabulary after the drop: %+v", c)
			}
			if m, _ := set.MemoryConfig(kept); len(m.TechStack) != 1 {
				t.Errorf("org_ab's memory config: %+v", m)
			}
			if c, _ := set.Predicates(kept); c.Mode != PredicatesStrict {
				t.Errorf("org_ab's vocabulary: %+v", c)
			}
		}
		if p, _ := set.Plan("org_a"); len(p.Features) != 0 {
			t.Errorf("org_a's plan after the drop: %+v", p)
		}
		if p, _ := set.Plan("org_ab"); !p.Features["kg_enabled"] {
			t.Errorf("org_ab's plan: %+v", p)
		}
		if b, _ := set.Budgets(); b.Defaults["chore"] != 123 {
			t.Errorf("the operator's budgets: %+v", b)
		}
	}
}
