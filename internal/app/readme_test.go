package app

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	standardwebhooks "github.com/standard-webhooks/standard-webhooks/libraries/go"

	"github.com/msgsvc/msgsvc/internal/nodetest"
)

// TestReadmeExamples keeps the README and the reference in docs/ true.
// First, every recipient number written in any example ("to",
// "recipients", --to) must be one msgsvc accepts. Then it
// starts a dev node (the demo account its first start creates, the
// simulator) and runs, in document order, every curl command of the blocks
// fenced "```sh run" of README.md and then of each docs/*.md file (those of
// readmeDocsOrder first, in that order, then the others by name), comparing
// each answer with the response documented under it. The files share one
// node, so an example that changes a setting must undo it for the ones
// after it to answer as documented.
//
// The rules, for whoever edits them:
//   - A "```sh run" block holds curl commands, shell assignments (NAME=value)
//     and comments, nothing else. A curl command in any other block fails
//     the test, unless the block is fenced "```sh norun": an example that
//     cannot run against a dev node (another host), kept out on purpose.
//   - http://127.0.0.1:8080 is the node; 127.0.0.1:9000 is a receiver that
//     checks every webhook's signature. $KEY is the demo account's test key
//     and $PASSWORD its panel password (lines such as KEY=svc_test_... are
//     placeholders and are skipped, like any assignment whose value holds
//     "..."); $TOKEN is the "token" of the latest answer that had one (a
//     login). Other assignments run before every later command of the same
//     file. Commands run in the root of the repository.
//   - msg_..., cmp_..., med_... and evt_... in a command stand for the first
//     such id in the latest answer that had one.
//   - The documented response is the comment right under a command:
//     "# [STATUS] JSON", the JSON continuing over the next comment lines
//     until its brackets close, or "# STATUS" alone for an empty answer.
//     No status means 200. Inside the JSON, "..." (or "…") as a member or
//     an element allows more of them (without it the members and elements
//     are exactly those shown); a string holding "..." matches any string
//     with the text around it; a timestamp matches any timestamp.
//     Everything else must be equal.
//   - A GET is asked again (for up to 10 s) until it matches, since
//     messages move on their own; other requests run once.
func TestReadmeExamples(t *testing.T) {
	if _, err := exec.LookPath("curl"); err != nil {
		t.Fatal("the README test runs the README's curl commands: install curl")
	}
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	files, err := readmeFiles(root)
	if err != nil {
		t.Fatal(err)
	}
	checkExamplePhones(t, root, files) // in every block, run or not
	var steps []readmeStep
	for _, f := range files {
		raw, err := os.ReadFile(filepath.Join(root, f))
		if err != nil {
			t.Fatal(err)
		}
		s, err := readmeSteps(f, string(raw))
		if err != nil {
			t.Fatal(err)
		}
		steps = append(steps, s...)
	}
	if len(steps) < 10 {
		t.Fatalf("only %d curl examples found in the run blocks of %v", len(steps), files)
	}
	node := startReadmeNode(t)
	r := &readmeRun{t: t, node: node, ids: map[string]string{}, dir: root}
	for _, s := range steps {
		if !r.step(s) {
			return // later steps depend on this one
		}
	}
	node.hooks.mu.Lock()
	defer node.hooks.mu.Unlock()
	if node.hooks.good == 0 || node.hooks.bad > 0 {
		t.Errorf("the examples' callbackUrl received %d verified and %d unverifiable webhooks", node.hooks.good, node.hooks.bad)
	}
}

// readmeDocsOrder is the order the reference pages run in after the
// README: the API first, since the others build on what it sends.
var readmeDocsOrder = []string{"api.md", "compliance.md", "panel.md", "operations.md", "providers.md"}

// readmeFiles lists the documents whose examples run, relative to root.
func readmeFiles(root string) ([]string, error) {
	all, err := filepath.Glob(filepath.Join(root, "docs", "*.md"))
	if err != nil {
		return nil, err
	}
	files := []string{"README.md"}
	seen := map[string]bool{}
	for _, name := range readmeDocsOrder {
		if _, err := os.Stat(filepath.Join(root, "docs", name)); err != nil {
			return nil, fmt.Errorf("docs/%s: %w (update readmeDocsOrder when a page moves)", name, err)
		}
		files = append(files, "docs/"+name)
		seen[name] = true
	}
	for _, p := range all { // Glob sorts by name
		if name := filepath.Base(p); !seen[name] {
			files = append(files, "docs/"+name)
		}
	}
	return files, nil
}

// readmeStep is one curl command of the README and what it documents.
type readmeStep struct {
	file        string   // relative to the repository's root
	line        int      // of the command, 1-based
	command     string   // as written, continuation lines included
	assignments []string // the assignments before it, in order
	status      int      // 0: nothing documented
	response    string   // the documented JSON, with elisions
}

var (
	assignRe     = regexp.MustCompile(`^[A-Z_][A-Z0-9_]*=`)
	responseRe   = regexp.MustCompile(`^# (?:(\d{3}) )?([{\[].*)$`)
	statusOnlyRe = regexp.MustCompile(`^# (\d{3})$`)
)

// readmeSteps finds the steps of the run blocks of one file, and refuses
// curl commands outside them and anything else inside them. Assignments
// hold within the file.
func readmeSteps(file, readme string) ([]readmeStep, error) {
	lines := strings.Split(readme, "\n")
	var steps []readmeStep
	var assignments []string
	for i := 0; i < len(lines); i++ {
		fence := lines[i]
		if !strings.HasPrefix(fence, "```") || fence == "```" {
			continue
		}
		run, norun := fence == "```sh run", fence == "```sh norun"
		for i++; i < len(lines) && lines[i] != "```"; i++ {
			l := lines[i]
			switch {
			case !run:
				if strings.HasPrefix(l, "curl ") && !norun {
					return nil, fmt.Errorf("%s:%d: a curl example the test does not run: fence its block \"```sh run\" (or \"```sh norun\" if it cannot run against a dev node)", file, i+1)
				}
			case strings.TrimSpace(l) == "" || strings.HasPrefix(l, "#"):
			case assignRe.MatchString(l):
				if !strings.Contains(strings.SplitN(l, "#", 2)[0], "...") {
					assignments = append(assignments, l)
				}
			case strings.HasPrefix(l, "curl "):
				s := readmeStep{file: file, line: i + 1, assignments: append([]string(nil), assignments...)}
				s.command, i = joinCommand(lines, i)
				s.status, s.response, i = documented(lines, i+1)
				steps = append(steps, s)
			default:
				return nil, fmt.Errorf("%s:%d: a \"```sh run\" block may hold only curl commands, assignments and comments: %q", file, i+1, l)
			}
		}
	}
	return steps, nil
}

// joinCommand takes the lines of one shell command: it goes on while a
// line ends in a backslash or leaves a quote open.
func joinCommand(lines []string, i int) (string, int) {
	var b strings.Builder
	quote := byte(0)
	for ; i < len(lines); i++ {
		l := lines[i]
		b.WriteString(l + "\n")
		quote = scanQuotes(l, quote)
		if quote == 0 && !strings.HasSuffix(l, "\\") {
			break
		}
	}
	return b.String(), i
}

// scanQuotes follows shell quoting over a line: it returns the quote
// still open at its end (0 for none). A # outside quotes starts a comment.
func scanQuotes(l string, quote byte) byte {
	for j := 0; j < len(l); j++ {
		c := l[j]
		switch {
		case quote == 0 && c == '#' && (j == 0 || l[j-1] == ' '):
			return 0
		case quote == 0 && (c == '\'' || c == '"'):
			quote = c
		case quote == '"' && c == '\\':
			j++
		case c == quote:
			quote = 0
		}
	}
	return quote
}

// documented reads the response documented from line i on: its status
// and JSON, and the index of its last line.
func documented(lines []string, i int) (int, string, int) {
	if i >= len(lines) {
		return 0, "", i - 1
	}
	if m := statusOnlyRe.FindStringSubmatch(lines[i]); m != nil {
		status := 0
		fmt.Sscan(m[1], &status)
		return status, "", i
	}
	m := responseRe.FindStringSubmatch(lines[i])
	if m == nil {
		return 0, "", i - 1
	}
	status := 200
	if m[1] != "" {
		fmt.Sscan(m[1], &status)
	}
	text := m[2]
	for depth := bracketDepth(text); depth > 0 && i+1 < len(lines) && strings.HasPrefix(lines[i+1], "#"); depth = bracketDepth(text) {
		i++
		text += "\n" + strings.TrimPrefix(lines[i], "#")
	}
	return status, text, i
}

// bracketDepth is how many brackets are open at the end of s (outside
// JSON strings).
func bracketDepth(s string) int {
	depth, in := 0, false
	for j := 0; j < len(s); j++ {
		switch c := s[j]; {
		case in && c == '\\':
			j++
		case c == '"':
			in = !in
		case !in && (c == '{' || c == '['):
			depth++
		case !in && (c == '}' || c == ']'):
			depth--
		}
	}
	return depth
}

// readmeNode is a dev node with its demo account, and the receiver the
// README's callbackUrl points to.
type readmeNode struct {
	base, key string
	password  string // the demo user's panel password
	hooks     *readmeHooks
	hookAddr  string
}

type readmeHooks struct {
	mu        sync.Mutex
	good, bad int
}

func startReadmeNode(t *testing.T) *readmeNode {
	t.Helper()
	dir := t.TempDir()
	cfg := nodetest.DevConfig(dir, "readme", 20*time.Millisecond)
	ctx, cancel := context.WithCancel(context.Background())
	srv, err := NewServer(ctx, cfg, slog.New(slog.NewTextHandler(io.Discard, nil)), Options{})
	if err != nil {
		cancel()
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- srv.Run(ctx) }()
	t.Cleanup(func() { cancel(); <-done })
	var welcome strings.Builder
	if err := devWelcome(ctx, srv, &welcome); err != nil {
		t.Fatal(err)
	}
	key := regexp.MustCompile(`test key\s+(svc_test_\S+)`).FindStringSubmatch(welcome.String())
	secret := regexp.MustCompile(`webhook secret\s+(whsec_\S+)`).FindStringSubmatch(welcome.String())
	password := regexp.MustCompile(`password\s+(\S+)`).FindStringSubmatch(welcome.String())
	if key == nil || secret == nil || password == nil {
		t.Fatalf("dev printed no test key, secret or password:\n%s", welcome.String())
	}
	n := &readmeNode{base: "http://" + srv.Addr(), key: key[1], password: password[1], hooks: &readmeHooks{}}
	recv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		wh, err := standardwebhooks.NewWebhook(secret[1])
		n.hooks.mu.Lock()
		defer n.hooks.mu.Unlock()
		if err != nil || wh.Verify(body, r.Header) != nil {
			n.hooks.bad++
			w.WriteHeader(http.StatusUnauthorized)
			return
		}
		n.hooks.good++
		w.WriteHeader(http.StatusNoContent)
	}))
	t.Cleanup(recv.Close)
	n.hookAddr = strings.TrimPrefix(recv.URL, "http://")
	return n
}

// readmeRun runs the steps in order on one node.
type readmeRun struct {
	t     *testing.T
	node  *readmeNode
	ids   map[string]string // prefix → id from the latest answer with one
	token string            // from the latest answer with one
	dir   string
}

var idRe = regexp.MustCompile(`\b(msg|cmp|med|evt)_[0-9a-z]{10,}`)

// step runs one command and compares its answer; false stops the run.
func (r *readmeRun) step(s readmeStep) bool {
	t := r.t
	cmd, err := r.prepare(s.command)
	if err != nil {
		t.Errorf("%s:%d: %v", s.file, s.line, err)
		return false
	}
	get := !regexp.MustCompile(`(^|\s)(-d|-F|-X|--data)\s`).MatchString(s.command)
	deadline := time.Now().Add(10 * time.Second)
	for {
		status, body, err := r.curl(s.assignments, cmd)
		if err != nil {
			t.Errorf("%s:%d: %v", s.file, s.line, err)
			return false
		}
		problem := ""
		if s.status != 0 && status != s.status {
			problem = fmt.Sprintf("status %d, documented %d", status, s.status)
		} else if s.response != "" {
			problem = compareDocumented(s.response, body)
		}
		if problem == "" {
			r.remember(body)
			return true
		}
		if !get || time.Now().After(deadline) {
			t.Errorf("%s:%d: %s\n  command: %s\n  answer:  %.600s", s.file, s.line, problem, strings.TrimSpace(s.command), body)
			return false
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// prepare points a command at the test's node and receiver and fills in
// the ids it names.
func (r *readmeRun) prepare(command string) (string, error) {
	c := strings.ReplaceAll(command, "http://127.0.0.1:8080", r.node.base)
	c = strings.ReplaceAll(c, "127.0.0.1:9000", r.node.hookAddr)
	for _, p := range []string{"msg", "cmp", "med", "evt"} {
		if !strings.Contains(c, p+"_...") {
			continue
		}
		id := r.ids[p]
		if id == "" {
			return "", fmt.Errorf("%s_... stands for an id, but no earlier answer had a %s_ id", p, p)
		}
		c = strings.ReplaceAll(c, p+"_...", id)
	}
	return strings.Replace(c, "curl ", `curl -w '\n%{http_code}' `, 1), nil
}

// curl runs a command in sh and returns the HTTP status and the body.
func (r *readmeRun) curl(assignments []string, cmd string) (int, string, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	sh := exec.CommandContext(ctx, "sh", "-c", strings.Join(append(assignments, cmd), "\n"))
	sh.Dir = r.dir
	sh.Env = append(os.Environ(), "KEY="+r.node.key, "PASSWORD="+r.node.password, "TOKEN="+r.token)
	out, err := sh.Output()
	if err != nil {
		return 0, "", fmt.Errorf("the command failed: %v (%s)", err, out)
	}
	text := strings.TrimRight(string(out), "\n")
	cut := strings.LastIndexByte(text, '\n')
	var status int
	if _, err := fmt.Sscan(text[cut+1:], &status); err != nil {
		return 0, "", fmt.Errorf("no HTTP status in curl's output %q", text)
	}
	return status, text[:max(cut, 0)], nil
}

func (r *readmeRun) remember(body string) {
	var login struct {
		Token string `json:"token"`
	}
	if json.Unmarshal([]byte(body), &login) == nil && login.Token != "" {
		r.token = login.Token
	}
	seen := map[string]bool{}
	for _, m := range idRe.FindAllStringSubmatch(body, -1) {
		if !seen[m[1]] {
			seen[m[1]] = true
			r.ids[m[1]] = m[0]
		}
	}
}

// compareDocumented matches an answer against a documented response and
// describes the first difference ("" when it matches).
func compareDocumented(doc, body string) string {
	want, err := parseDocumented(doc)
	if err != nil {
		return "the documented response does not parse: " + err.Error()
	}
	var got any
	if err := json.Unmarshal([]byte(body), &got); err != nil {
		return "the answer is not JSON"
	}
	return matchDocumented(want, got, "$")
}

// docObject keeps a documented object's members and whether more are
// allowed.
type docObject struct {
	members map[string]any
	order   []string
	more    bool
}

type docArray struct {
	items []any
	more  bool
}

var timestampRe = regexp.MustCompile(`^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?Z$`)

func matchDocumented(want, got any, at string) string {
	switch w := want.(type) {
	case docObject:
		g, ok := got.(map[string]any)
		if !ok {
			return fmt.Sprintf("at %s: documented an object, got %s", at, short(got))
		}
		for _, k := range w.order {
			v, ok := g[k]
			if !ok {
				return fmt.Sprintf("at %s: documented %q, which the answer lacks", at, k)
			}
			if p := matchDocumented(w.members[k], v, at+"."+k); p != "" {
				return p
			}
		}
		if !w.more && len(g) != len(w.order) {
			return fmt.Sprintf("at %s: the answer has members the README does not show (add them, or \"...\")", at)
		}
	case docArray:
		g, ok := got.([]any)
		if !ok || len(g) < len(w.items) || (!w.more && len(g) != len(w.items)) {
			return fmt.Sprintf("at %s: documented %d elements (more allowed: %v), got %s", at, len(w.items), w.more, short(got))
		}
		for i, item := range w.items {
			if p := matchDocumented(item, g[i], fmt.Sprintf("%s[%d]", at, i)); p != "" {
				return p
			}
		}
	case string:
		g, ok := got.(string)
		switch {
		case !ok:
			return fmt.Sprintf("at %s: documented %q, got %s", at, w, short(got))
		case strings.Contains(w, "...") || strings.Contains(w, "…"):
			pre, post, _ := strings.Cut(strings.ReplaceAll(w, "…", "..."), "...")
			if !strings.HasPrefix(g, pre) || !strings.HasSuffix(g[len(pre):], post) {
				return fmt.Sprintf("at %s: documented %q, got %q", at, w, g)
			}
		case timestampRe.MatchString(w):
			if !timestampRe.MatchString(g) {
				return fmt.Sprintf("at %s: documented a timestamp, got %q", at, g)
			}
		case w != g:
			return fmt.Sprintf("at %s: documented %q, got %q", at, w, g)
		}
	default:
		if fmt.Sprint(want) != fmt.Sprint(got) {
			return fmt.Sprintf("at %s: documented %v, got %s", at, want, short(got))
		}
	}
	return ""
}

func short(v any) string {
	b, _ := json.Marshal(v)
	if len(b) > 120 {
		return string(b[:120]) + "…"
	}
	return string(b)
}
