package ui_test

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/cdproto/log"
	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/chromedp"

	"github.com/kgctx/kgctx/api"
	"github.com/kgctx/kgctx/api/apitest"
	"github.com/kgctx/kgctx/engine/auth"
)

// chromium finds a Chromium binary: $KGCTX_CHROMIUM, or one on PATH.
func chromium() string {
	if p := os.Getenv("KGCTX_CHROMIUM"); p != "" {
		return p
	}
	for _, n := range []string{"chromium", "chromium-browser", "google-chrome", "google-chrome-stable"} {
		if p, err := exec.LookPath(n); err == nil {
			return p
		}
	}
	return ""
}

// TestBrowser drives the explorer in headless Chromium against a real
// server: it signs in, asks a query, checks the block, the drawing and a
// node's panel, opens the stats, saves a screenshot
// ($KGCTX_UI_SCREENSHOT, else a temporary file) and fails on any console
// error or Content-Security-Policy violation. Skips without Chromium
// (scripts/install-chromium.sh installs it) and under -short.
func TestBrowser(t *testing.T) {
	if testing.Short() {
		t.Skip("browser test: not under -short")
	}
	bin := chromium()
	if bin == "" {
		t.Skip("no Chromium (scripts/install-chromium.sh installs Debian's)")
	}
	s := apitest.Start(t, api.Config{})
	tok := s.Token("org_ui", "explorer", auth.RoleImporter, "p1")
	res, b := get(t, "POST", s.URL+"/v1/orgs/org_ui/projects/p1/triplets", tok, []map[string]any{
		{"source": "AuthMiddleware", "relationship": "calls", "target": "AuthService", "sourceDescription": "Checks every request's bearer token.",
			"targetDescription": "Issues and checks tokens."},
		{"source": "AuthService", "relationship": "depends_on", "target": "PostgresDB"},
		{"source": "AuthService", "relationship": "uses", "target": "TokenCache"},
		{"source": "TokenCache", "relationship": "backed_by", "target": "Redis"},
		{"source": "BillingService", "relationship": "calls", "target": "AuthService"},
	})
	if res.StatusCode != 200 {
		t.Fatalf("import: %d %s", res.StatusCode, b)
	}

	opts := append(chromedp.DefaultExecAllocatorOptions[:], chromedp.ExecPath(bin), chromedp.NoSandbox, chromedp.DisableGPU,
		chromedp.WindowSize(1400, 1000))
	actx, cancel := chromedp.NewExecAllocator(context.Background(), opts...)
	defer cancel()
	ctx, cancel := chromedp.NewContext(actx)
	defer cancel()
	ctx, cancel = context.WithTimeout(ctx, 60*time.Second)
	defer cancel()
	var mu sync.Mutex
	var problems []string
	chromedp.ListenTarget(ctx, func(ev any) {
		mu.Lock()
		defer mu.Unlock()
		switch ev := ev.(type) {
		case *runtime.EventExceptionThrown:
			problems = append(problems, "exception: "+ev.ExceptionDetails.Error())
		case *runtime.EventConsoleAPICalled:
			if ev.Type == runtime.APITypeError {
				problems = append(problems, "console error")
			}
		case *log.EventEntryAdded:
			if ev.Entry.Level == log.LevelError {
				problems = append(problems, "log: "+ev.Entry.Text)
			}
		}
	})
	var block, facts, stats, stored string
	var nodes, seeds, rows int
	clickAuth := `[...document.querySelectorAll("svg .node")].find(g => g.textContent.startsWith("AuthService")).dispatchEvent(new MouseEvent("click", {bubbles: true})); true`
	var ok bool
	var shot []byte
	err := chromedp.Run(ctx,
		log.Enable(), runtime.Enable(),
		chromedp.Navigate(s.URL+"/ui"),
		chromedp.WaitVisible("#token", chromedp.ByID),
		chromedp.SendKeys("#token", tok, chromedp.ByID),
		chromedp.Click(`#login-form button`, chromedp.ByQuery),
		chromedp.WaitVisible("#app", chromedp.ByID),
		chromedp.Evaluate(`sessionStorage.getItem("kgctx.token") !== null && localStorage.length === 0 && document.cookie === ""`, &ok),
		chromedp.SendKeys("#query", "why does the auth middleware fail", chromedp.ByID),
		chromedp.Click(`#query-form button`, chromedp.ByQuery),
		chromedp.WaitVisible("#graph .node", chromedp.ByQuery),
		chromedp.Text("#block", &block, chromedp.ByID),
		chromedp.Evaluate(`document.querySelectorAll("#graph .node").length`, &nodes),
		chromedp.Evaluate(`document.querySelectorAll("#graph .node.seed").length`, &seeds),
		chromedp.Evaluate(`document.querySelectorAll("#lines tbody tr").length`, &rows),
		chromedp.Evaluate(clickAuth, &ok),
		chromedp.WaitVisible("#node", chromedp.ByID),
		chromedp.WaitVisible("#node-edges li.edge-item", chromedp.ByQuery),
		chromedp.Text("#node", &facts, chromedp.ByID),
		chromedp.FullScreenshot(&shot, 100),
		chromedp.Click(`button.tab[data-view="stats"]`, chromedp.ByQuery),
		chromedp.WaitVisible("#stats svg", chromedp.ByQuery),
		chromedp.Text("#stats", &stats, chromedp.ByID),
		chromedp.Click("#logout", chromedp.ByID),
		chromedp.WaitVisible("#login", chromedp.ByID),
		chromedp.Evaluate(`String(sessionStorage.getItem("kgctx.token"))`, &stored),
	)
	if err != nil {
		t.Fatalf("browser: %v (problems: %v)", err, problems)
	}
	if !strings.Contains(block, "AuthMiddleware → calls → AuthService") {
		t.Errorf("the block lacks the agent's line:\n%s", block)
	}
	if nodes < 3 || seeds < 1 || rows < 2 {
		t.Errorf("drawing: %d nodes, %d seeds, %d score rows", nodes, seeds, rows)
	}
	if !strings.Contains(facts, "Issues and checks tokens.") || !strings.Contains(facts, "depends_on") || !strings.Contains(facts, "weight") {
		t.Errorf("node panel:\n%s", facts)
	}
	if !strings.Contains(stats, "calls") || !strings.Contains(stats, "6 nodes, 5 triplets") {
		t.Errorf("stats:\n%s", stats)
	}
	if stored != "null" {
		t.Errorf("the token outlived log out: %q", stored)
	}
	mu.Lock()
	if len(problems) > 0 {
		t.Errorf("console errors or CSP violations: %v", problems)
	}
	mu.Unlock()
	path := os.Getenv("KGCTX_UI_SCREENSHOT")
	if path == "" {
		path = filepath.Join(t.TempDir(), "explorer.png")
	}
	if err := os.WriteFile(path, shot, 0o644); err != nil {
		t.Fatal(err)
	}
	t.Logf("screenshot: %s", path)
}
