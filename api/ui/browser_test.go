package ui_test

import (
	"bytes"
	"cmp"
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"image"
	"image/color"
	"image/png"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/fetch"
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

// longName is a node whose label the drawing must shorten.
const longName = "AuthAuditEventPublisherForComplianceReports"

// TestBrowser drives the explorer in headless Chromium against a real
// server, in a fresh tab 1400, 1024 and 800 px wide (900 high): it signs
// in, checks the project picker, asks a query, checks the block, the
// drawing and a node's panel, and measures the page: no two panels and
// no two labels of the drawing may intersect (see checkLayout). At 1400
// it also opens the stats, comes back and logs out; at 800 the tab plays
// an older server without the projects list, for a token of the whole
// org, which types its project. Fails on any console error or
// Content-Security-Policy violation. Saves the screenshots at 1400 and
// 1024 wide ($KGCTX_UI_SCREENSHOT and the same name with "-1024", else
// temporary files). Skips without Chromium (scripts/install-chromium.sh
// installs it) and under -short.
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
	// Several seeds with long names, so that the middle of the drawing is
	// crowded.
	res, b := get(t, "POST", s.URL+"/v1/orgs/org_ui/projects/p1/triplets", tok, []map[string]any{
		{"source": "AuthMiddleware", "relationship": "calls", "target": "AuthService", "sourceDescription": "Checks every request's bearer token.",
			"targetDescription": "Issues and checks tokens."},
		{"source": "AuthService", "relationship": "depends_on", "target": "PostgresDB"},
		{"source": "AuthService", "relationship": "uses", "target": "TokenCache"},
		{"source": "TokenCache", "relationship": "backed_by", "target": "Redis"},
		{"source": "BillingService", "relationship": "calls", "target": "AuthService"},
		{"source": "AuthMiddlewareErrorHandler", "relationship": "wraps", "target": "AuthMiddleware",
			"sourceDescription": "Turns auth middleware failures into 401 answers."},
		{"source": longName, "relationship": "listens_to", "target": "AuthMiddleware",
			"sourceDescription": "Publishes an audit event for every auth middleware decision."},
		{"source": "AuthMiddlewareConfigLoader", "relationship": "configures", "target": "AuthMiddleware"},
		{"source": "AuthGateway", "relationship": "routes_to", "target": "UserService", "sourceDescription": "Fronts every auth request."},
		{"source": "MiddlewareChain", "relationship": "orders", "target": "CorsMiddleware",
			"sourceDescription": "Runs each middleware in turn; a failing one stops the chain."},
		{"source": "AuthFailureNotifier", "relationship": "notifies", "target": "OnCallRota"},
	})
	if res.StatusCode != 200 {
		t.Fatalf("import: %d %s", res.StatusCode, b)
	}
	// The project picker lists the org's projects with their sizes.
	var ps struct {
		Projects []struct {
			ProjectID string
			Nodes     int
		}
	}
	res, b = get(t, "GET", s.URL+"/v1/orgs/org_ui/projects", tok, nil)
	if err := json.Unmarshal(b, &ps); err != nil || res.StatusCode != 200 || len(ps.Projects) != 1 || ps.Projects[0].ProjectID != "p1" {
		t.Fatalf("projects: %d %s", res.StatusCode, b)
	}
	listed := fmt.Sprintf("p1 (%d nodes)", ps.Projects[0].Nodes)

	opts := append(chromedp.DefaultExecAllocatorOptions[:], chromedp.ExecPath(bin), chromedp.NoSandbox, chromedp.DisableGPU,
		chromedp.WindowSize(1400, 900))
	actx, cancel := chromedp.NewExecAllocator(context.Background(), opts...)
	defer cancel()
	bctx, cancel := chromedp.NewContext(actx)
	defer cancel()
	if err := chromedp.Run(bctx); err != nil {
		t.Fatal(err)
	}
	shots := os.Getenv("KGCTX_UI_SCREENSHOT")
	if shots == "" {
		shots = filepath.Join(t.TempDir(), "explorer.png")
	}
	t.Run("1400", func(t *testing.T) { explore(t, bctx, s.URL, tok, 1400, listed, false, shots) })
	t.Run("1024", func(t *testing.T) {
		explore(t, bctx, s.URL, tok, 1024, listed, false, strings.TrimSuffix(shots, ".png")+"-1024.png")
	})
	// As against an older server: the projects list answers 404, and a
	// token for the whole org types its project.
	orgWide := s.Token("org_ui", "explorer", auth.RoleImporter)
	t.Run("800", func(t *testing.T) { explore(t, bctx, s.URL, orgWide, 800, listed, true, "") })
}

// explore runs the explorer in a new tab w px wide and 900 high; older:
// the tab answers the projects list 404 itself, as an older server would.
func explore(t *testing.T, bctx context.Context, url, tok string, w int64, listed string, older bool, shotPath string) {
	ctx, cancel := chromedp.NewContext(bctx)
	defer cancel()
	ctx, cancel = context.WithTimeout(ctx, 60*time.Second)
	defer cancel()
	projects := "/v1/orgs/org_ui/projects"
	var mu sync.Mutex
	var problems []string
	chromedp.ListenTarget(ctx, func(ev any) {
		mu.Lock()
		defer mu.Unlock()
		switch ev := ev.(type) {
		case *fetch.EventRequestPaused:
			go func() {
				c := chromedp.FromContext(ctx)
				err := fetch.FulfillRequest(ev.RequestID, 404).
					WithResponseHeaders([]*fetch.HeaderEntry{{Name: "Content-Type", Value: "application/json"}}).
					WithBody(base64.StdEncoding.EncodeToString([]byte(`{"error":{"code":"not_found","message":"no such route"}}`))).
					Do(cdp.WithExecutor(ctx, c.Target))
				if err != nil && ctx.Err() == nil {
					mu.Lock()
					problems = append(problems, "answering the projects list: "+err.Error())
					mu.Unlock()
				}
			}()
		case *runtime.EventExceptionThrown:
			problems = append(problems, "exception: "+ev.ExceptionDetails.Error())
		case *runtime.EventConsoleAPICalled:
			if ev.Type == runtime.APITypeError {
				problems = append(problems, "console error")
			}
		case *log.EventEntryAdded:
			// The 404 for the projects list is the older server the
			// page expects, not a fault.
			if older && ev.Entry.Source == log.SourceNetwork && strings.HasSuffix(ev.Entry.URL, projects) {
				return
			}
			if ev.Entry.Level == log.LevelError {
				problems = append(problems, "log: "+ev.Entry.Text+" "+ev.Entry.URL)
			}
		}
	})
	var block, facts, label, title string
	var nodes, seeds, rows int
	var picker struct {
		Select, Text bool // shown
		Options      []string
	}
	clickAuth := `[...document.querySelectorAll("svg .node")].find(g => g.querySelector("title").textContent.startsWith("AuthService ")).dispatchEvent(new MouseEvent("click", {bubbles: true})); true`
	long := `[...document.querySelectorAll("#graph .node")].find(g => g.querySelector("title").textContent.startsWith("` + longName + `"))`
	var ok bool
	var shot []byte
	var l layout
	intercept := chromedp.ActionFunc(func(ctx context.Context) error {
		if !older {
			return nil
		}
		return fetch.Enable().WithPatterns([]*fetch.RequestPattern{{URLPattern: "*" + projects}}).Do(ctx)
	})
	err := chromedp.Run(ctx,
		log.Enable(), runtime.Enable(), intercept,
		chromedp.EmulateViewport(w, 900),
		chromedp.Navigate(url+"/ui"),
		chromedp.WaitVisible("#token", chromedp.ByID),
		chromedp.SendKeys("#token", tok, chromedp.ByID),
		chromedp.Click(`#login-form button`, chromedp.ByQuery),
		chromedp.WaitVisible("#app", chromedp.ByID),
		chromedp.Evaluate(`({select: !document.getElementById("project").hidden, text: !document.getElementById("project-text").hidden,
			options: [...document.querySelectorAll("#project option")].map(o => o.textContent)})`, &picker),
		chromedp.Evaluate(`sessionStorage.getItem("kgctx.token") !== null && localStorage.length === 0 && document.cookie === ""`, &ok),
		chromedp.ActionFunc(func(ctx context.Context) error {
			if !picker.Text {
				return nil
			}
			return chromedp.SendKeys("#project-text", "p1", chromedp.ByID).Do(ctx)
		}),
		chromedp.SendKeys("#query", "why does the auth middleware fail", chromedp.ByID),
		chromedp.Click(`#query-form button`, chromedp.ByQuery),
		chromedp.WaitVisible("#graph .node", chromedp.ByQuery),
		chromedp.Text("#block", &block, chromedp.ByID),
		chromedp.Evaluate(`document.querySelectorAll("#graph .node").length`, &nodes),
		chromedp.Evaluate(`document.querySelectorAll("#graph .node.seed").length`, &seeds),
		chromedp.Evaluate(`document.querySelectorAll("#lines tbody tr").length`, &rows),
		chromedp.Evaluate(long+`.querySelector("text").textContent`, &label),
		chromedp.Evaluate(long+`.querySelector("title").textContent`, &title),
		chromedp.Evaluate(clickAuth, &ok),
		chromedp.WaitVisible("#node", chromedp.ByID),
		chromedp.WaitVisible("#node-edges li.edge-item", chromedp.ByQuery),
		chromedp.Text("#node", &facts, chromedp.ByID),
		chromedp.Evaluate(measure, &l),
	)
	if err != nil {
		t.Fatalf("browser: %v (problems: %v)", err, problems)
	}
	if !ok {
		t.Error("the token is kept beyond the tab")
	}
	switch {
	case older:
		if picker.Select || !picker.Text {
			t.Errorf("project picker without the projects route, for the whole org: %+v, want a text box", picker)
		}
	default:
		if !picker.Select || picker.Text || len(picker.Options) != 1 || picker.Options[0] != listed {
			t.Errorf("project picker %+v, want [%q]", picker, listed)
		}
	}
	if !strings.Contains(block, "AuthMiddleware → calls → AuthService") {
		t.Errorf("the block lacks the agent's line:\n%s", block)
	}
	if nodes < 3 || seeds < 3 || rows < 2 {
		t.Errorf("drawing: %d nodes, %d seeds, %d score rows; want 3 seeds or more to test their labels", nodes, seeds, rows)
	}
	if !strings.HasSuffix(label, "…") || len(label) >= len(longName) || !strings.HasPrefix(title, longName) {
		t.Errorf("a long name's label %q, title %q: want it shortened, the title whole", label, title)
	}
	if !strings.Contains(facts, "Issues and checks tokens.") || !strings.Contains(facts, "depends_on") || !strings.Contains(facts, "weight") {
		t.Errorf("node panel:\n%s", facts)
	}
	checkLayout(t, "after the query", w, l)
	if shotPath != "" {
		if err := chromedp.Run(ctx, chromedp.FullScreenshot(&shot, 100)); err != nil {
			t.Fatal(err)
		}
		if shot, err = smallPNG(shot); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(shotPath, shot, 0o644); err != nil {
			t.Fatal(err)
		}
		t.Logf("screenshot: %s", shotPath)
	}
	if w == 1400 {
		var stats, stored string
		err := chromedp.Run(ctx,
			chromedp.Click(`button.tab[data-view="stats"]`, chromedp.ByQuery),
			chromedp.WaitVisible("#stats svg", chromedp.ByQuery),
			chromedp.Text("#stats", &stats, chromedp.ByID),
			// Back to the query: the drawing shows again, laid out anew.
			chromedp.Click(`button.tab[data-view="query"]`, chromedp.ByQuery),
			chromedp.WaitVisible("#graph .node", chromedp.ByQuery),
			chromedp.Evaluate(measure, &l),
			chromedp.Click("#logout", chromedp.ByID),
			chromedp.WaitVisible("#login", chromedp.ByID),
			chromedp.Evaluate(`String(sessionStorage.getItem("kgctx.token"))`, &stored),
		)
		if err != nil {
			t.Fatalf("browser: %v (problems: %v)", err, problems)
		}
		if !strings.Contains(stats, "calls") || !strings.Contains(stats, "15 nodes, 11 triplets") {
			t.Errorf("stats:\n%s", stats)
		}
		checkLayout(t, "back from the stats", w, l)
		if stored != "null" {
			t.Errorf("the token outlived log out: %q", stored)
		}
	}
	mu.Lock()
	if len(problems) > 0 {
		t.Errorf("console errors or CSP violations: %v", problems)
	}
	mu.Unlock()
}

// box is an element's getBoundingClientRect, in CSS px.
type box struct {
	Name                     string
	Left, Top, Right, Bottom float64
}

func (a box) String() string {
	return fmt.Sprintf("%s [%.0f,%.0f %.0f×%.0f]", a.Name, a.Left, a.Top, a.Right-a.Left, a.Bottom-a.Top)
}

// intersects: a and b share an area (touching edges do not).
func (a box) intersects(b box) bool {
	const eps = 0.5
	return min(a.Right, b.Right)-max(a.Left, b.Left) > eps && min(a.Bottom, b.Bottom)-max(a.Top, b.Top) > eps
}

// layout is what measure reads from the page.
type layout struct {
	Width, ScrollWidth float64
	Panels, Labels     []box
	Graph              box
}

// measure reads the boxes of the page's panels and of every label the
// drawing shows.
const measure = `(() => {
  const box = (e, name) => { const r = e.getBoundingClientRect(); return {name, left: r.left, top: r.top, right: r.right, bottom: r.bottom}; };
  const shown = (e) => { const r = e.getBoundingClientRect(); return r.width > 0 && r.height > 0; };
  const panels = [...document.querySelectorAll("header, nav, .view:not([hidden]) form, #block, #lines, #graph, #node")].filter(shown).map((e) => box(e, e.id || e.tagName.toLowerCase()));
  const labels = [...document.querySelectorAll("#graph text")].filter(shown).map((e) => box(e, e.textContent));
  return {width: window.innerWidth, scrollWidth: document.documentElement.scrollWidth, panels, labels, graph: box(document.getElementById("graph"), "graph")};
})()`

// checkLayout: no two panels intersect, nothing is wider than the
// window, and every label of the drawing lies inside it, apart from all
// the others.
func checkLayout(t *testing.T, when string, w int64, l layout) {
	t.Helper()
	if l.Width != float64(w) || len(l.Panels) < 6 || len(l.Labels) < 3 {
		t.Fatalf("%s: measured %.0f px wide, %d panels, %d labels", when, l.Width, len(l.Panels), len(l.Labels))
	}
	if l.ScrollWidth > l.Width {
		t.Errorf("%s: the page is %.0f px wide in a %.0f px window", when, l.ScrollWidth, l.Width)
	}
	for i, a := range l.Panels {
		for _, b := range l.Panels[i+1:] {
			if a.intersects(b) {
				t.Errorf("%s: panels overlap: %v and %v", when, a, b)
			}
		}
	}
	g := l.Graph
	for i, a := range l.Labels {
		if a.Left < g.Left || a.Top < g.Top || a.Right > g.Right || a.Bottom > g.Bottom {
			t.Errorf("%s: label %v outside the drawing %v", when, a, g)
		}
		for _, b := range l.Labels[i+1:] {
			if a.intersects(b) {
				t.Errorf("%s: labels overlap: %v and %v", when, a, b)
			}
		}
	}
}

// smallPNG re-encodes a screenshot in its 256 most frequent colours (the
// rest to the nearest of them), a third of the size and alike to the eye:
// the page is flat colours and their anti-aliasing.
func smallPNG(b []byte) ([]byte, error) {
	img, err := png.Decode(bytes.NewReader(b))
	if err != nil {
		return nil, err
	}
	r := img.Bounds()
	rgba := func(x, y int) color.RGBA { return color.RGBAModel.Convert(img.At(x, y)).(color.RGBA) }
	count := map[color.RGBA]int{}
	for y := r.Min.Y; y < r.Max.Y; y++ {
		for x := r.Min.X; x < r.Max.X; x++ {
			count[rgba(x, y)]++
		}
	}
	key := func(c color.RGBA) uint32 { return uint32(c.R)<<24 | uint32(c.G)<<16 | uint32(c.B)<<8 | uint32(c.A) }
	cs := slices.SortedFunc(maps.Keys(count), func(a, b color.RGBA) int {
		return cmp.Or(count[b]-count[a], cmp.Compare(key(a), key(b)))
	})
	pal := make(color.Palette, 0, 256)
	for _, c := range cs[:min(len(cs), 256)] {
		pal = append(pal, c)
	}
	out := image.NewPaletted(r, pal)
	index := map[color.RGBA]uint8{}
	for y := r.Min.Y; y < r.Max.Y; y++ {
		for x := r.Min.X; x < r.Max.X; x++ {
			c := rgba(x, y)
			i, ok := index[c]
			if !ok {
				i = uint8(pal.Index(c))
				index[c] = i
			}
			out.SetColorIndex(x, y, i)
		}
	}
	var buf bytes.Buffer
	err = (&png.Encoder{CompressionLevel: png.BestCompression}).Encode(&buf, out)
	return buf.Bytes(), err
}
