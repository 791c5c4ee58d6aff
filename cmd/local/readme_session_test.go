package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"
)

// The README's curl session is a test: TestREADMESession takes the shell
// commands between the session markers of README.md, runs them with sh
// (curl and python3 as written) against a local server started in this
// process, and compares what each command printed with the output the README
// shows under it. A reader who pastes the session gets what it shows, and a
// change to the API or to the README that makes them disagree fails here.
//
// The format, inside the markers:
//   - only ```sh blocks run, in order, as one shell script (variables carry
//     over from block to block);
//   - a step is a command (one or more lines, continuation lines included)
//     followed by the lines starting with "#" that show its output ("# "
//     stripped; a lone "#" is an empty line). A step that shows no output
//     must print nothing; a blank line ends a step;
//   - a shown line starting with "{" or "[" (a JSON value, which may go on
//     over the following "#" lines until its brackets close) is compared as
//     JSON with "…" for what differs from run to run: "…" as a member of an
//     object allows other members (an object without it must have exactly
//     the members shown), as an element of an array any number of elements,
//     as a value any value, and inside a string any text. Any other shown
//     line is compared as text, "…" matching any text;
//   - the base URL line must be exactly readmeBaseLine: the test points it
//     at its own server.

const (
	readmeSessionBegin = "<!-- session:begin -->"
	readmeSessionEnd   = "<!-- session:end -->"
	readmeBaseLine     = "B=http://127.0.0.1:3000"
	// sessionEllipsis marks an elided part of a shown output.
	sessionEllipsis = "…"
)

// readmeSessionRoutes are what the session must show, so that emptying or
// gutting it fails the test rather than passing it vacuously: each is a text
// that must occur in the session's commands.
var readmeSessionRoutes = []string{
	"POST $B/v1/games ",       // create a game against the AI
	`"type":"move"`,           // a move
	"?afterVersion=",          // the long poll
	"/events?afterVersion=",   // the change log
	`"type":"resign"`,         // resign
	"/pgn",                    // the PGN
	"POST $B/v1/positions",    // stateless rules
	"POST $B/v1/ai/move",      // the AI endpoint
	"POST $B/v1/players ",     // a player
	"$B/v1/players/me ",       // the player's profile
	"-w '\\n%{http_code}\\n'", // a status shown (the rule violation's 422)
}

// minSessionChecks is the least number of steps with a shown output.
const minSessionChecks = 10

func TestREADMESession(t *testing.T) {
	for _, tool := range []string{"sh", "curl", "python3"} {
		if _, err := exec.LookPath(tool); err != nil {
			if testing.Short() {
				t.Skipf("the README session runs %s, which is not on PATH (skipped in -short mode only)", tool)
			}
			t.Fatalf("the README session runs %s, which is not on PATH: %v", tool, err)
		}
	}
	readme, err := os.ReadFile(filepath.Join("..", "..", "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	steps, err := parseSession(string(readme))
	if err != nil {
		t.Fatalf("README.md: %v", err)
	}
	checkSessionCoverage(t, steps)

	base := startSessionServer(t)
	outDir, workDir := t.TempDir(), t.TempDir()
	script, err := sessionScript(steps, base, outDir)
	if err != nil {
		t.Fatalf("README.md: %v", err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "sh", "-c", script)
	cmd.Dir = workDir
	// curl must reach the loopback server directly whatever proxy the
	// machine is configured with.
	cmd.Env = append(os.Environ(), "NO_PROXY=127.0.0.1,localhost", "no_proxy=127.0.0.1,localhost", "LC_ALL=C.UTF-8")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	runErr := cmd.Run()

	done := 0
	if b, err := os.ReadFile(filepath.Join(outDir, "done")); err == nil {
		done, _ = strconv.Atoi(strings.TrimSpace(string(b)))
	}
	for i, st := range steps {
		if i >= done {
			errText, _ := os.ReadFile(filepath.Join(outDir, fmt.Sprintf("err.%d", i)))
			t.Fatalf("README.md:%d: the session stopped at this step (%v)\ncommand:\n%s\nstderr: %s%s",
				st.line, runErr, st.command, errText, stderr.String())
		}
		out, err := os.ReadFile(filepath.Join(outDir, fmt.Sprintf("out.%d", i)))
		if err != nil {
			t.Fatal(err)
		}
		if err := st.check(string(out)); err != nil {
			t.Errorf("README.md:%d: %v\ncommand:\n%s\nprinted:\n%s", st.line, err, st.command, out)
		}
	}
	if runErr != nil {
		t.Fatalf("the session script failed after its last step: %v\n%s", runErr, stderr.String())
	}
	t.Logf("ran the %d steps of the README session", len(steps))
}

// checkSessionCoverage fails when the session lost a part it must show.
func checkSessionCoverage(t *testing.T, steps []sessionStep) {
	t.Helper()
	var commands strings.Builder
	checks := 0
	for _, st := range steps {
		commands.WriteString(st.command + "\n")
		if st.shown != nil {
			checks++
		}
	}
	for _, want := range readmeSessionRoutes {
		if !strings.Contains(commands.String(), want) {
			t.Errorf("README.md: the session has no command with %q", want)
		}
	}
	if checks < minSessionChecks {
		t.Errorf("README.md: the session shows %d outputs; want at least %d", checks, minSessionChecks)
	}
}

// startSessionServer runs the local server in this process on a free port,
// configured as `go run ./cmd/local` runs it (AI endpoint open, no keys).
func startSessionServer(t *testing.T) string {
	t.Helper()
	cfg := config{addr: "127.0.0.1:0", dataPath: filepath.Join(t.TempDir(), "chess.db"), engines: 1, hashMB: 16}
	ctx, cancel := context.WithCancel(context.Background())
	ready := make(chan string, 1)
	done := make(chan error, 1)
	go func() { done <- run(ctx, cfg, slog.New(slog.DiscardHandler), ready) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("local server: %v", err)
		}
	})
	select {
	case addr := <-ready:
		return "http://" + addr
	case err := <-done:
		t.Fatalf("local server did not start: %v", err)
	case <-time.After(30 * time.Second):
		t.Fatal("local server did not start within 30 s")
	}
	return ""
}

// sessionStep is one command of the session and the output shown under it.
type sessionStep struct {
	line    int    // README line of the command's first line
	command string // the command's lines as written
	// shown holds the shown output lines ("# " stripped); nil when the
	// README shows none (the command must then print nothing).
	shown     []string
	shownLine int // README line of the first shown line
}

// parseSession returns the steps of the session between the markers.
func parseSession(readme string) ([]sessionStep, error) {
	begin := strings.Index(readme, readmeSessionBegin)
	end := strings.Index(readme, readmeSessionEnd)
	switch {
	case begin < 0 || end < 0:
		return nil, fmt.Errorf("no session: want the markers %s and %s", readmeSessionBegin, readmeSessionEnd)
	case end < begin:
		return nil, errors.New("the session's end marker comes before its begin marker")
	case strings.Count(readme, readmeSessionBegin) != 1 || strings.Count(readme, readmeSessionEnd) != 1:
		return nil, errors.New("the session markers must occur once each")
	}
	firstLine := strings.Count(readme[:begin], "\n") + 1
	lines := strings.Split(readme[begin:end], "\n")

	var steps []sessionStep
	var cur *sessionStep
	closeStep := func() {
		if cur != nil {
			cur.command = strings.TrimRight(cur.command, "\n")
			steps = append(steps, *cur)
			cur = nil
		}
	}
	inSh, inOther := false, false
	for i, line := range lines {
		n := firstLine + i
		trimmed := strings.TrimSpace(line)
		if strings.HasPrefix(trimmed, "```") {
			switch {
			case inSh:
				closeStep()
				inSh = false
			case inOther:
				inOther = false
			case strings.TrimSpace(strings.TrimPrefix(trimmed, "```")) == "sh":
				inSh = true
			default:
				inOther = true
			}
			continue
		}
		if !inSh {
			continue
		}
		switch {
		case strings.HasPrefix(line, "#"):
			if cur == nil {
				return nil, fmt.Errorf("line %d: shown output with no command before it", n)
			}
			var text string
			switch {
			case line == "#":
			case strings.HasPrefix(line, "# "):
				text = line[2:]
			default:
				return nil, fmt.Errorf("line %d: a shown output line starts with \"# \" (or is a lone \"#\")", n)
			}
			if cur.shown == nil {
				cur.shownLine = n
				cur.shown = []string{}
			}
			cur.shown = append(cur.shown, text)
		case trimmed == "":
			closeStep()
		default:
			if cur != nil && cur.shown != nil {
				closeStep()
			}
			if cur == nil {
				cur = &sessionStep{line: n}
			}
			cur.command += line + "\n"
		}
	}
	if inSh || inOther {
		return nil, errors.New("a code block of the session is not closed before the end marker")
	}
	if len(steps) == 0 {
		return nil, errors.New("the session has no ```sh commands")
	}
	return steps, nil
}

// sessionScript is the shell script that runs the steps against base: each
// step's output goes to outDir/out.<i> (stderr to err.<i>), and outDir/done
// counts the steps completed, so a failing step is named.
func sessionScript(steps []sessionStep, base, outDir string) (string, error) {
	if strings.ContainsAny(outDir, "'\n") {
		return "", fmt.Errorf("output directory %q cannot be quoted", outDir)
	}
	var b strings.Builder
	b.WriteString("set -eu\n")
	replaced := false
	for i, st := range steps {
		command := st.command
		if !replaced {
			lines := strings.Split(command, "\n")
			for j, l := range lines {
				if l == readmeBaseLine {
					lines[j] = "B=" + base
					replaced = true
					break
				}
			}
			command = strings.Join(lines, "\n")
		}
		fmt.Fprintf(&b, "{\n%s\n} >'%s/out.%d' 2>'%s/err.%d'\necho %d >'%s/done'\n", command, outDir, i, outDir, i, i+1, outDir)
	}
	if !replaced {
		return "", fmt.Errorf("the session does not set the base URL with the line %q", readmeBaseLine)
	}
	return b.String(), nil
}

// shownItem is one line of expected output, or one JSON value that may
// span several shown lines.
type shownItem struct {
	text   string
	isJSON bool
}

// shownItems groups a step's shown lines into items.
func shownItems(shown []string) ([]shownItem, error) {
	var items []shownItem
	for i := 0; i < len(shown); i++ {
		if !looksLikeJSON(shown[i]) {
			items = append(items, shownItem{text: shown[i]})
			continue
		}
		text := shown[i]
		for !bracketsClosed(text) {
			i++
			if i >= len(shown) {
				return nil, fmt.Errorf("a shown JSON value is not closed: %s", text)
			}
			text += "\n" + shown[i]
		}
		items = append(items, shownItem{text: text, isJSON: true})
	}
	return items, nil
}

// looksLikeJSON tells a shown JSON value from a text line such as a PGN
// tag ("[Event …]"): an object, or an array whose first element starts
// like a JSON value.
func looksLikeJSON(line string) bool {
	if strings.HasPrefix(line, "{") {
		return true
	}
	rest, ok := strings.CutPrefix(line, "[")
	if !ok {
		return false
	}
	rest = strings.TrimLeft(rest, " ")
	if rest == "" || strings.HasPrefix(rest, sessionEllipsis) {
		return rest != ""
	}
	return strings.ContainsRune("{[\"]-0123456789tfn", rune(rest[0]))
}

// bracketsClosed reports whether every { and [ of s outside strings is
// closed.
func bracketsClosed(s string) bool {
	depth, inString, escaped := 0, false, false
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case inString && escaped:
			escaped = false
		case inString && c == '\\':
			escaped = true
		case inString && c == '"':
			inString = false
		case inString:
		case c == '"':
			inString = true
		case c == '{' || c == '[':
			depth++
		case c == '}' || c == ']':
			depth--
		}
	}
	return depth <= 0 && !inString
}

// check compares what the step printed with what the README shows.
func (st sessionStep) check(out string) error {
	out = strings.TrimSuffix(out, "\n")
	if st.shown == nil {
		if out != "" {
			return errors.New("the command printed output, but the README shows none")
		}
		return nil
	}
	items, err := shownItems(st.shown)
	if err != nil {
		return fmt.Errorf("README.md:%d: %w", st.shownLine, err)
	}
	got := strings.Split(out, "\n")
	if len(got) != len(items) {
		return fmt.Errorf("printed %d lines; the README shows %d", len(got), len(items))
	}
	for i, item := range items {
		if !item.isJSON {
			if !globMatch(item.text, got[i]) {
				return fmt.Errorf("line %d is %q; the README shows %q", i+1, got[i], item.text)
			}
			continue
		}
		p, err := parsePattern(item.text)
		if err != nil {
			return fmt.Errorf("the README's JSON (item %d) does not parse: %w", i+1, err)
		}
		var v any
		dec := json.NewDecoder(strings.NewReader(got[i]))
		dec.UseNumber()
		if err := dec.Decode(&v); err != nil {
			return fmt.Errorf("line %d is not JSON: %v", i+1, err)
		}
		if dec.More() {
			return fmt.Errorf("line %d has more after its JSON value", i+1)
		}
		if err := p.match("$", v); err != nil {
			return fmt.Errorf("line %d differs from the README: %w", i+1, err)
		}
	}
	return nil
}

// globMatch reports whether s is pattern with each "…" standing for any
// text.
func globMatch(pattern, s string) bool {
	parts := strings.Split(pattern, sessionEllipsis)
	if len(parts) == 1 {
		return s == pattern
	}
	if !strings.HasPrefix(s, parts[0]) {
		return false
	}
	s = s[len(parts[0]):]
	last := parts[len(parts)-1]
	for _, mid := range parts[1 : len(parts)-1] {
		i := strings.Index(s, mid)
		if i < 0 {
			return false
		}
		s = s[i+len(mid):]
	}
	return len(s) >= len(last) && strings.HasSuffix(s, last)
}

// A pattern is a shown JSON value with "…" for what is elided.
type pattern struct {
	kind patternKind
	// members of an object; open: "…" among them allows others.
	members []patternMember
	open    bool
	// elems of an array; a nil element is "…" (any number of elements).
	elems []*pattern
	// text is a string's text ("…" in it matches any text) or a number's or
	// literal's JSON text.
	text string
}

type patternKind uint8

const (
	patternAny patternKind = iota // "…": any value
	patternObject
	patternArray
	patternString
	patternNumber
	patternLiteral // true, false, null
)

type patternMember struct {
	key   string
	value *pattern
}

// parsePattern reads a shown JSON value.
func parsePattern(s string) (*pattern, error) {
	p := &patternParser{s: s}
	v, err := p.value(0)
	if err != nil {
		return nil, err
	}
	p.space()
	if p.i != len(p.s) {
		return nil, p.errorf("text after the value")
	}
	return v, nil
}

type patternParser struct {
	s string
	i int
}

// maxPatternDepth bounds nesting (the parser recurses).
const maxPatternDepth = 64

func (p *patternParser) errorf(format string, args ...any) error {
	return fmt.Errorf("at byte %d: %s", p.i, fmt.Sprintf(format, args...))
}

func (p *patternParser) space() {
	for p.i < len(p.s) && strings.IndexByte(" \t\r\n", p.s[p.i]) >= 0 {
		p.i++
	}
}

func (p *patternParser) ellipsis() bool {
	if strings.HasPrefix(p.s[p.i:], sessionEllipsis) {
		p.i += len(sessionEllipsis)
		return true
	}
	return false
}

func (p *patternParser) value(depth int) (*pattern, error) {
	if depth > maxPatternDepth {
		return nil, p.errorf("nested too deeply")
	}
	p.space()
	if p.ellipsis() {
		return &pattern{kind: patternAny}, nil
	}
	if p.i >= len(p.s) {
		return nil, p.errorf("a value is missing")
	}
	switch c := p.s[p.i]; {
	case c == '{':
		return p.object(depth)
	case c == '[':
		return p.array(depth)
	case c == '"':
		text, err := p.str()
		if err != nil {
			return nil, err
		}
		return &pattern{kind: patternString, text: text}, nil
	case c == '-' || c >= '0' && c <= '9':
		start := p.i
		for p.i < len(p.s) && strings.IndexByte("+-.eE0123456789", p.s[p.i]) >= 0 {
			p.i++
		}
		text := p.s[start:p.i]
		if _, err := strconv.ParseFloat(text, 64); err != nil || !json.Valid([]byte(text)) {
			return nil, p.errorf("bad number %q", text)
		}
		return &pattern{kind: patternNumber, text: text}, nil
	}
	for _, lit := range []string{"true", "false", "null"} {
		if strings.HasPrefix(p.s[p.i:], lit) {
			p.i += len(lit)
			return &pattern{kind: patternLiteral, text: lit}, nil
		}
	}
	return nil, p.errorf("unexpected %q", p.s[p.i:min(p.i+8, len(p.s))])
}

// str reads a JSON string token.
func (p *patternParser) str() (string, error) {
	start := p.i
	p.i++ // the opening quote
	for p.i < len(p.s) {
		switch p.s[p.i] {
		case '\\':
			p.i += 2
			continue
		case '"':
			p.i++
			var text string
			if err := json.Unmarshal([]byte(p.s[start:p.i]), &text); err != nil {
				return "", fmt.Errorf("at byte %d: bad string %s: %v", start, p.s[start:p.i], err)
			}
			return text, nil
		}
		p.i++
	}
	return "", fmt.Errorf("at byte %d: unterminated string", start)
}

func (p *patternParser) object(depth int) (*pattern, error) {
	p.i++ // {
	obj := &pattern{kind: patternObject}
	seen := map[string]bool{}
	p.space()
	if p.i < len(p.s) && p.s[p.i] == '}' {
		p.i++
		return obj, nil
	}
	for {
		p.space()
		switch {
		case p.ellipsis():
			obj.open = true
		case p.i < len(p.s) && p.s[p.i] == '"':
			key, err := p.str()
			if err != nil {
				return nil, err
			}
			if seen[key] {
				return nil, p.errorf("member %q twice", key)
			}
			seen[key] = true
			p.space()
			if p.i >= len(p.s) || p.s[p.i] != ':' {
				return nil, p.errorf("want ':' after %q", key)
			}
			p.i++
			v, err := p.value(depth + 1)
			if err != nil {
				return nil, err
			}
			obj.members = append(obj.members, patternMember{key: key, value: v})
		default:
			return nil, p.errorf("want a member or …")
		}
		p.space()
		if p.i >= len(p.s) {
			return nil, p.errorf("object not closed")
		}
		switch p.s[p.i] {
		case ',':
			p.i++
		case '}':
			p.i++
			return obj, nil
		default:
			return nil, p.errorf("want ',' or '}'")
		}
	}
}

func (p *patternParser) array(depth int) (*pattern, error) {
	p.i++ // [
	arr := &pattern{kind: patternArray, elems: []*pattern{}}
	p.space()
	if p.i < len(p.s) && p.s[p.i] == ']' {
		p.i++
		return arr, nil
	}
	for {
		p.space()
		if p.ellipsis() {
			arr.elems = append(arr.elems, nil)
		} else {
			v, err := p.value(depth + 1)
			if err != nil {
				return nil, err
			}
			arr.elems = append(arr.elems, v)
		}
		p.space()
		if p.i >= len(p.s) {
			return nil, p.errorf("array not closed")
		}
		switch p.s[p.i] {
		case ',':
			p.i++
		case ']':
			p.i++
			return arr, nil
		default:
			return nil, p.errorf("want ',' or ']'")
		}
	}
}

// match reports how v (decoded with UseNumber) differs from the pattern;
// path names the value for the message.
func (p *pattern) match(path string, v any) error {
	switch p.kind {
	case patternAny:
		return nil
	case patternObject:
		obj, ok := v.(map[string]any)
		if !ok {
			return fmt.Errorf("%s: want an object, got %s", path, describeJSON(v))
		}
		for _, m := range p.members {
			got, ok := obj[m.key]
			if !ok {
				return fmt.Errorf("%s.%s: missing", path, m.key)
			}
			if err := m.value.match(path+"."+m.key, got); err != nil {
				return err
			}
		}
		if !p.open && len(obj) != len(p.members) {
			var extra []string
			for k := range obj {
				if !p.has(k) {
					extra = append(extra, k)
				}
			}
			sort.Strings(extra)
			return fmt.Errorf("%s: members %v are not shown (show them, or add … to the object)", path, extra)
		}
		return nil
	case patternArray:
		arr, ok := v.([]any)
		if !ok {
			return fmt.Errorf("%s: want an array, got %s", path, describeJSON(v))
		}
		return matchElems(path, p.elems, arr, 0)
	case patternString:
		s, ok := v.(string)
		if !ok {
			return fmt.Errorf("%s: want a string, got %s", path, describeJSON(v))
		}
		if !globMatch(p.text, s) {
			return fmt.Errorf("%s: %q does not match %q", path, s, p.text)
		}
		return nil
	case patternNumber:
		n, ok := v.(json.Number)
		if !ok {
			return fmt.Errorf("%s: want the number %s, got %s", path, p.text, describeJSON(v))
		}
		want, _ := strconv.ParseFloat(p.text, 64)
		got, err := strconv.ParseFloat(string(n), 64)
		if err != nil || got != want {
			return fmt.Errorf("%s: %s, want %s", path, n, p.text)
		}
		return nil
	}
	var want any // patternLiteral
	switch p.text {
	case "true":
		want = true
	case "false":
		want = false
	}
	if v != want {
		return fmt.Errorf("%s: %s, want %s", path, describeJSON(v), p.text)
	}
	return nil
}

func (p *pattern) has(key string) bool {
	for _, m := range p.members {
		if m.key == key {
			return true
		}
	}
	return false
}

// matchElems matches array elements against element patterns, a nil
// pattern ("…") standing for any number of elements; offset is the index of
// vals[0] in the whole array.
func matchElems(path string, pats []*pattern, vals []any, offset int) error {
	if len(pats) == 0 {
		if len(vals) != 0 {
			return fmt.Errorf("%s: %d more elements than shown (add … to the array)", path, len(vals))
		}
		return nil
	}
	if pats[0] == nil {
		var first error
		for k := 0; k <= len(vals); k++ {
			err := matchElems(path, pats[1:], vals[k:], offset+k)
			if err == nil {
				return nil
			}
			if first == nil {
				first = err
			}
		}
		return first
	}
	if len(vals) == 0 {
		return fmt.Errorf("%s: fewer elements than shown", path)
	}
	if err := pats[0].match(fmt.Sprintf("%s[%d]", path, offset), vals[0]); err != nil {
		return err
	}
	return matchElems(path, pats[1:], vals[1:], offset+1)
}

// describeJSON names a decoded value briefly for a message.
func describeJSON(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Sprintf("%v", v)
	}
	if len(b) > 80 {
		return string(b[:77]) + "..."
	}
	return string(b)
}

// TestSessionMatcher: the comparison accepts what the README may show and
// refuses every kind of disagreement, so TestREADMESession can fail.
func TestSessionMatcher(t *testing.T) {
	actual := `{"game":{"version":3,"turn":"white","moves":[{"uci":"e2e4"},{"uci":"d7d5"}],"lastMove":null,"check":false,"deadline":1796107952116},"events":[]}`
	for _, tc := range []struct {
		shown string
		ok    bool
	}{
		{`{"game":{…},"events":[]}`, true},
		{`{"game":{"version":3,…},…}`, true},
		{`{"game":{"version":3,"turn":"white","moves":[…],"lastMove":null,"check":false,"deadline":…},"events":[…]}`, true},
		{`{"game":{…,"moves":[{"uci":"e2e4"},…]},…}`, true},
		{`{"game":{…,"moves":[…,{"uci":"d7…"}]},…}`, true},
		{`{"game":{…,"moves":[{"uci":"e2e4"},{"uci":"…"}]},…}`, true},
		{`{"game":{…,"deadline":1796107952116.0},…}`, true},
		{"{\"game\":{\"version\":3,\n  …},\n …}", true},
		{`{"game":{…}}`, false},                                 // events not shown, object closed
		{`{"game":{"version":4,…},…}`, false},                   // a value differs
		{`{"game":{"version":"3",…},…}`, false},                 // a type differs
		{`{"game":{…,"turn":"black"},…}`, false},                // a string differs
		{`{"game":{…,"turn":"wh…k"},…}`, false},                 // a glob does not match
		{`{"game":{…,"moves":[{"uci":"e2e4"}]},…}`, false},      // an element more than shown
		{`{"game":{…,"moves":[…,{"uci":"e2e4"}]},…}`, false},    // wrong last element
		{`{"game":{…,"moves":[…,…,…,{},…]},…}`, false},          // an element's members not shown
		{`{"game":{…,"lastMove":{…}},…}`, false},                // null is not an object
		{`{"game":{…,"check":true},…}`, false},                  // a literal differs
		{`{"game":{…,"clock":…},…}`, false},                     // a member missing
		{`{"game":{…},"events":[],"version":3}`, false},         // a member more than printed
		{`{"game":{…},"events":[…,{"type":"moved"},…]}`, false}, // an element missing
		{`[…]`, false}, // not an array
	} {
		st := sessionStep{shown: strings.Split(tc.shown, "\n")}
		err := st.check(actual)
		if (err == nil) != tc.ok {
			t.Errorf("shown %s: check = %v; want ok %v", tc.shown, err, tc.ok)
		}
	}

	text := sessionStep{shown: []string{`[Event "Casual game"]`, `[Date "…"]`, "", "1. e4 … 0-1"}}
	if err := text.check("[Event \"Casual game\"]\n[Date \"2026.12.01\"]\n\n1. e4 d5 0-1\n"); err != nil {
		t.Errorf("text lines: %v", err)
	}
	for _, bad := range []string{
		"[Event \"Casual game\"]\n[Date \"2026.12.01\"]\n\n1. e4 d5 1-0\n",    // the result differs
		"[Event \"Casual game\"]\n[Date \"2026.12.01\"]\n1. e4 d5 0-1\n",      // a line missing
		"[Event \"Casual game\"]\n[Date \"2026.12.01\"]\n\n1. e4 d5 0-1\nx\n", // a line more
	} {
		if text.check(bad) == nil {
			t.Errorf("text lines: %q accepted", bad)
		}
	}
	if (sessionStep{}).check("something") == nil {
		t.Error("output printed by a step that shows none was accepted")
	}
	if (sessionStep{}).check("") != nil {
		t.Error("a silent step that shows nothing was refused")
	}
}

// TestParseSession: steps, shown lines and the errors of a malformed
// session.
func TestParseSession(t *testing.T) {
	readme := "intro\n" + readmeSessionBegin + "\ntext\n```sh\n" + readmeBaseLine + "\ncurl -s $B/x \\\n  -d '{}'\n# {\"a\":1}\n#\n# b\n\nG=1\n```\n```json\n{\"x\":1}\n```\n```sh\necho $G\n# 1\n```\n" + readmeSessionEnd + "\n"
	steps, err := parseSession(readme)
	if err != nil {
		t.Fatal(err)
	}
	want := []sessionStep{
		{line: 5, command: readmeBaseLine + "\ncurl -s $B/x \\\n  -d '{}'", shown: []string{`{"a":1}`, "", "b"}, shownLine: 8},
		{line: 12, command: "G=1"},
		{line: 18, command: "echo $G", shown: []string{"1"}, shownLine: 19},
	}
	if fmt.Sprint(steps) != fmt.Sprint(want) {
		t.Errorf("steps:\n%+v\nwant\n%+v", steps, want)
	}
	script, err := sessionScript(steps, "http://127.0.0.1:1234", "/tmp/out")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(script, "B=http://127.0.0.1:1234\n") || strings.Contains(script, readmeBaseLine) {
		t.Errorf("the base URL was not replaced:\n%s", script)
	}
	for _, bad := range []string{
		"no markers",
		readmeSessionEnd + readmeSessionBegin,
		readmeSessionBegin + "\n```sh\n# out first\n```\n" + readmeSessionEnd,
		readmeSessionBegin + "\n```sh\necho\n#x\n```\n" + readmeSessionEnd,
		readmeSessionBegin + "\n```sh\necho\n" + readmeSessionEnd,
		readmeSessionBegin + "\nno code\n" + readmeSessionEnd,
		readmeSessionBegin + readmeSessionBegin + readmeSessionEnd,
	} {
		if _, err := parseSession(bad); err == nil {
			t.Errorf("parseSession(%q) accepted it", bad)
		}
	}
	if _, err := sessionScript([]sessionStep{{command: "B=http://example.com"}}, "http://x", "/tmp"); err == nil {
		t.Error("a session without the base URL line was accepted")
	}
}

// FuzzSessionPattern: the pattern parser never panics, and any JSON value
// read as a pattern (no "…" in it) matches itself and only values equal to
// it.
func FuzzSessionPattern(f *testing.F) {
	for _, seed := range []string{
		`{"a":[1,2,{"b":null}],"c":"x…y",…}`, `[…,1,…]`, `…`, `"…"`, `{"a":}`, `[1,`, `-0.5e3`, `{"a":1,"a":2}`,
		`{"game":{"version":3,…,"clock":{"running":"white"}}}`, `true`, `[[[[]]]]`, `"\u00e9\n"`,
	} {
		f.Add(seed, `{"a":[1,2,{"b":null}],"c":"xzy"}`)
	}
	f.Fuzz(func(t *testing.T, shown, actual string) {
		p, err := parsePattern(shown)
		var v any
		dec := json.NewDecoder(strings.NewReader(actual))
		dec.UseNumber()
		if dec.Decode(&v) == nil && p != nil {
			_ = p.match("$", v) // must not panic
		}
		if err != nil || strings.Contains(shown, sessionEllipsis) || !json.Valid([]byte(shown)) {
			return
		}
		var self any
		dec = json.NewDecoder(strings.NewReader(shown))
		dec.UseNumber()
		if err := dec.Decode(&self); err != nil {
			return
		}
		if hasDuplicateKeys(shown) {
			return // the parser refuses these; encoding/json keeps the last
		}
		if err := p.match("$", self); err != nil {
			t.Fatalf("%s does not match itself: %v", shown, err)
		}
	})
}

// hasDuplicateKeys reports whether a JSON text has an object with a key
// twice (the fuzz target's parser refuses those).
func hasDuplicateKeys(s string) bool {
	dec := json.NewDecoder(strings.NewReader(s))
	var walk func() (bool, error)
	walk = func() (bool, error) {
		tok, err := dec.Token()
		if err != nil {
			return false, err
		}
		switch tok {
		case json.Delim('{'):
			seen := map[string]bool{}
			for dec.More() {
				k, err := dec.Token()
				if err != nil {
					return false, err
				}
				key, _ := k.(string)
				if seen[key] {
					return true, nil
				}
				seen[key] = true
				if dup, err := walk(); dup || err != nil {
					return dup, err
				}
			}
			_, err = dec.Token()
			return false, err
		case json.Delim('['):
			for dec.More() {
				if dup, err := walk(); dup || err != nil {
					return dup, err
				}
			}
			_, err = dec.Token()
			return false, err
		}
		return false, nil
	}
	dup, _ := walk()
	return dup
}

// FuzzParseSession: the README parser never panics, and every step it
// returns has a command.
func FuzzParseSession(f *testing.F) {
	f.Add(readmeSessionBegin + "\n```sh\n" + readmeBaseLine + "\ncurl -s $B\n# {\"a\":1}\n```\n" + readmeSessionEnd)
	f.Add(readmeSessionBegin + "\n```sh\n# x\n```\n" + readmeSessionEnd)
	f.Add(readmeSessionBegin + "\n```\n```sh\n\n\n```\n" + readmeSessionEnd)
	f.Fuzz(func(t *testing.T, readme string) {
		steps, err := parseSession(readme)
		if err != nil {
			return
		}
		for _, st := range steps {
			if strings.TrimSpace(st.command) == "" {
				t.Fatalf("a step without a command: %+v", st)
			}
			if st.shown != nil {
				_, _ = shownItems(st.shown)
			}
		}
	})
}
