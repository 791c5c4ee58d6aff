package chess

import (
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
)

// PGNTag is one tag pair, e.g. {Name: "Event", Value: "Casual game"}.
type PGNTag struct{ Name, Value string }

// PGNGame is a game in Portable Game Notation terms: tags, a start position,
// the moves and the result.
type PGNGame struct {
	// Tags are written after the Seven Tag Roster, in order. Roster tags
	// given here replace the "?" defaults; Variant, SetUp and FEN are derived
	// from Start and any given here are ignored on output.
	Tags []PGNTag
	// Start is the initial position; nil means the standard start.
	Start *Position
	// Moves must be legal in sequence from Start.
	Moves []Move
	// Result is "1-0", "0-1", "1/2-1/2" or "*" (empty counts as "*").
	Result string
	// Comments, when set, holds a comment for each move (by index; an
	// empty one or a missing index writes none), written as {comment}
	// after the move. A comment must not contain '}'.
	Comments []string
}

// sevenTagRoster lists the mandatory tags in their mandatory order.
var sevenTagRoster = [...]PGNTag{
	{"Event", "?"}, {"Site", "?"}, {"Date", "????.??.??"}, {"Round", "?"},
	{"White", "?"}, {"Black", "?"}, {"Result", "*"},
}

// pgnLineWidth is the longest movetext line: the export format's lines
// have "less than 80 printing characters" (PGN standard 8.2.1).
const pgnLineWidth = 79

// ErrPGNIllegalMove: a PGNGame's move list contains a move that is not legal
// where it is played.
var ErrPGNIllegalMove = errors.New("chess: pgn: illegal move in game")

// Tag returns the value of the named tag and whether it is present.
func (g *PGNGame) Tag(name string) (string, bool) {
	for _, t := range g.Tags {
		if t.Name == name {
			return t.Value, true
		}
	}
	return "", false
}

// String returns the PGN text; see Text. If a move is illegal the movetext
// stops before it.
func (g *PGNGame) String() string {
	s, _ := g.Text()
	return s
}

// Text returns the PGN text in the export format of the PGN standard
// (8.1.1, 8.2.1): the Seven Tag Roster in its order, then the other tags in
// ASCII order of their names — the given ones, and Variant "Chess960",
// SetUp "1" and FEN when the game does not start from the standard
// position — then SAN movetext (with the moves' comments) in lines of less
// than 80 characters, ending with the result. It fails with
// ErrPGNIllegalMove (after writing the legal prefix) if a move is not
// legal.
func (g *PGNGame) Text() (string, error) {
	result := g.Result
	if result == "" {
		result = "*"
	}
	var b strings.Builder
	for _, t := range sevenTagRoster {
		v := t.Value
		if t.Name == "Result" {
			v = result
		} else if given, ok := g.Tag(t.Name); ok {
			v = given
		}
		writePGNTag(&b, t.Name, v)
	}
	var extra []PGNTag
	for _, t := range g.Tags {
		if isRosterTag(t.Name) || t.Name == "Variant" || t.Name == "SetUp" || t.Name == "FEN" {
			continue
		}
		extra = append(extra, t)
	}
	pos := StartingPosition()
	if g.Start != nil {
		pos = new(Position)
		*pos = *g.Start
		if pos.chess960 {
			extra = append(extra, PGNTag{"Variant", "Chess960"})
		}
		if fen := pos.FEN(); pos.chess960 || fen != StartFEN {
			extra = append(extra, PGNTag{"SetUp", "1"}, PGNTag{"FEN", fen})
		}
	}
	slices.SortStableFunc(extra, func(a, b PGNTag) int { return strings.Compare(a.Name, b.Name) })
	for _, t := range extra {
		writePGNTag(&b, t.Name, t.Value)
	}
	b.WriteByte('\n')

	var err error
	line := 0
	emit := func(tok string) {
		if line > 0 && line+1+len(tok) > pgnLineWidth {
			b.WriteByte('\n')
			line = 0
		}
		if line > 0 {
			b.WriteByte(' ')
			line++
		}
		b.WriteString(tok)
		line += len(tok)
	}
	var legal MoveList
	for i, m := range g.Moves {
		pos.GenerateMoves(&legal, GenAll)
		if !legal.Contains(m) {
			err = fmt.Errorf("%w: ply %d (%s)", ErrPGNIllegalMove, i+1, m)
			break
		}
		if pos.side == White {
			emit(strconv.Itoa(int(pos.fullmove)) + ".")
		} else if i == 0 || i-1 < len(g.Comments) && g.Comments[i-1] != "" {
			// Black's move after a comment repeats its number (8.2.2.2).
			emit(strconv.Itoa(int(pos.fullmove)) + "...")
		}
		emit(pos.san(m, &legal))
		if i < len(g.Comments) && g.Comments[i] != "" {
			emit("{" + g.Comments[i] + "}")
		}
		pos.Play(m)
	}
	emit(result)
	b.WriteByte('\n')
	return b.String(), err
}

func isRosterTag(name string) bool {
	for _, t := range sevenTagRoster {
		if t.Name == name {
			return true
		}
	}
	return false
}

func writePGNTag(b *strings.Builder, name, value string) {
	b.WriteByte('[')
	b.WriteString(name)
	b.WriteString(` "`)
	for _, r := range value {
		switch r {
		case '\\', '"':
			b.WriteByte('\\')
			b.WriteRune(r)
		case '\n', '\r', '\t':
			b.WriteByte(' ')
		default:
			b.WriteRune(r)
		}
	}
	b.WriteString("\"]\n")
}

// PGNError reports where a PGN text could not be read. For movetext errors,
// MoveNumber is the full-move number and Color the side whose move failed.
type PGNError struct {
	Line       int    // 1-based line of the offending token
	MoveNumber int    // 0 for errors outside the movetext
	Color      Color  // side to move at the failing move
	Token      string // the offending text
	Err        error  // ErrSyntax, a *FENError or a *MoveError
}

func (e *PGNError) Error() string {
	if e.MoveNumber > 0 {
		reason := e.Err
		var me *MoveError
		if errors.As(reason, &me) {
			reason = me.Err
		}
		dots := "."
		if e.Color == Black {
			dots = "..."
		}
		return fmt.Sprintf("chess: pgn line %d: move %d%s %s: %s", e.Line, e.MoveNumber, dots, e.Token, trimPrefix(reason.Error()))
	}
	return fmt.Sprintf("chess: pgn line %d: %q: %s", e.Line, e.Token, trimPrefix(e.Err.Error()))
}

func (e *PGNError) Unwrap() error { return e.Err }

// maxPGNText bounds the input of ParsePGN; a game of 1,000 moves is far below.
const maxPGNText = 1 << 20

// ParsePGN reads the first game of a PGN text: tags, then SAN movetext
// (comments, NAGs, annotation glyphs and variations are skipped; SAN is read
// tolerantly as ParseSAN does). The start position comes from the FEN tag
// (Chess960 when the Variant tag says so or the castling field needs it).
// Errors are *PGNError naming the line and the move that failed.
func ParsePGN(text string) (*PGNGame, error) {
	if len(text) > maxPGNText {
		return nil, &PGNError{Line: 1, Token: "", Err: fmt.Errorf("%w: text longer than %d bytes", ErrSyntax, maxPGNText)}
	}
	sc := pgnScanner{src: text, line: 1}
	g := &PGNGame{}

	// Tag section.
	for {
		sc.skipSpaceAndComments()
		if !sc.peekIs('[') {
			break
		}
		startLine := sc.line
		name, value, ok := sc.tag()
		if !ok {
			return nil, &PGNError{Line: startLine, Token: sc.rest(20), Err: ErrSyntax}
		}
		g.Tags = append(g.Tags, PGNTag{Name: name, Value: value})
	}

	pos := StartingPosition()
	if fen, ok := g.Tag("FEN"); ok {
		variant := VariantAuto
		if v, _ := g.Tag("Variant"); isChess960Name(v) {
			variant = VariantChess960
		}
		p, err := ParseFENVariant(fen, variant)
		if err != nil {
			return nil, &PGNError{Line: 1, Token: fen, Err: err}
		}
		pos = p
		g.Start = new(Position)
		*g.Start = *p
	} else if v, _ := g.Tag("Variant"); isChess960Name(v) {
		// A Chess960 game without a FEN tag starts from position 518.
		p, _ := Chess960Start(Chess960StandardIndex)
		pos = p
		g.Start = new(Position)
		*g.Start = *p
	}

	// Movetext.
	for {
		sc.skipSpaceAndComments()
		if sc.done() || sc.peekIs('[') {
			break // end of this game
		}
		tokLine := sc.line
		tok := sc.token()
		switch {
		case tok == "":
			return nil, &PGNError{Line: tokLine, Token: sc.rest(20), Err: ErrSyntax}
		case tok == "1-0" || tok == "0-1" || tok == "1/2-1/2" || tok == "*":
			g.Result = tok
			return g.finish(), nil
		case tok[0] == '$' || isMoveNumber(tok) || strings.Trim(tok, "!?") == "":
			continue
		}
		tok = stripMoveNumber(tok) // "1.e4", "12...Nf6"
		m, err := pos.ParseSAN(tok)
		if err != nil {
			return nil, &PGNError{Line: tokLine, MoveNumber: int(pos.fullmove), Color: pos.side, Token: tok, Err: err}
		}
		g.Moves = append(g.Moves, m)
		pos.Play(m)
	}
	return g.finish(), nil
}

// finish fills the result from the Result tag when the movetext had none.
func (g *PGNGame) finish() *PGNGame {
	if g.Result == "" {
		if r, ok := g.Tag("Result"); ok && (r == "1-0" || r == "0-1" || r == "1/2-1/2") {
			g.Result = r
		} else {
			g.Result = "*"
		}
	}
	return g
}

func isChess960Name(v string) bool {
	switch strings.ToLower(strings.ReplaceAll(v, " ", "")) {
	case "chess960", "fischerandom", "fischerrandom", "960":
		return true
	}
	return false
}

// isMoveNumber reports tokens like "12." or "12..." (or a bare "12").
func isMoveNumber(tok string) bool {
	digits := strings.TrimRight(tok, ".")
	if digits == "" {
		return true // lone dots
	}
	for _, c := range []byte(digits) {
		if c < '0' || c > '9' {
			return false
		}
	}
	return true
}

// stripMoveNumber removes a move number glued to a move ("1.e4" -> "e4").
func stripMoveNumber(tok string) string {
	i := 0
	for i < len(tok) && tok[i] >= '0' && tok[i] <= '9' {
		i++
	}
	if i == 0 || i == len(tok) || tok[i] != '.' {
		return tok
	}
	return strings.TrimLeft(tok[i:], ".")
}

// pgnScanner walks PGN text, skipping what the import format allows to skip.
type pgnScanner struct {
	src  string
	pos  int
	line int
}

func (s *pgnScanner) done() bool         { return s.pos >= len(s.src) }
func (s *pgnScanner) peekIs(c byte) bool { return s.pos < len(s.src) && s.src[s.pos] == c }
func (s *pgnScanner) rest(n int) string  { return s.src[s.pos:min(len(s.src), s.pos+n)] }

// skipSpaceAndComments skips white space, {comments}, ;comments, %escape
// lines and (variations), which may nest.
func (s *pgnScanner) skipSpaceAndComments() {
	depth := 0
	atLineStart := s.pos == 0 || s.src[s.pos-1] == '\n'
	for s.pos < len(s.src) {
		c := s.src[s.pos]
		switch {
		case c == '\n':
			s.line++
			s.pos++
			atLineStart = true
			continue
		case c == ' ' || c == '\t' || c == '\r' || c == '\f' || c == '\v':
			s.pos++
		case c == '{':
			for s.pos < len(s.src) && s.src[s.pos] != '}' {
				if s.src[s.pos] == '\n' {
					s.line++
				}
				s.pos++
			}
			if s.pos < len(s.src) {
				s.pos++ // the '}'
			}
		case c == ';' || (c == '%' && atLineStart):
			for s.pos < len(s.src) && s.src[s.pos] != '\n' {
				s.pos++
			}
		case c == '(':
			depth++
			s.pos++
		case c == ')' && depth > 0:
			depth--
			s.pos++
		case depth > 0:
			// Inside a variation: skip tokens, keep nesting and comments.
			if s.token() == "" {
				s.pos++ // a stray delimiter such as '"', '[' or '}'
			}
		default:
			return
		}
		atLineStart = false
	}
}

func isPGNDelimiter(c byte) bool {
	switch c {
	case ' ', '\t', '\r', '\n', '\f', '\v', '{', '}', '(', ')', ';', '[', ']', '"':
		return true
	}
	return false
}

// token reads one movetext token (up to a delimiter).
func (s *pgnScanner) token() string {
	start := s.pos
	for s.pos < len(s.src) && !isPGNDelimiter(s.src[s.pos]) {
		s.pos++
	}
	return s.src[start:s.pos]
}

// tag reads `[Name "Value"]`.
func (s *pgnScanner) tag() (name, value string, ok bool) {
	s.pos++ // '['
	for s.pos < len(s.src) && (s.src[s.pos] == ' ' || s.src[s.pos] == '\t') {
		s.pos++
	}
	start := s.pos
	for s.pos < len(s.src) && isTagNameChar(s.src[s.pos]) {
		s.pos++
	}
	name = s.src[start:s.pos]
	for s.pos < len(s.src) && (s.src[s.pos] == ' ' || s.src[s.pos] == '\t') {
		s.pos++
	}
	if name == "" || !s.peekIs('"') {
		return "", "", false
	}
	s.pos++
	var v strings.Builder
	for {
		if s.pos >= len(s.src) || s.src[s.pos] == '\n' {
			return "", "", false
		}
		c := s.src[s.pos]
		s.pos++
		if c == '"' {
			break
		}
		if c == '\\' && s.pos < len(s.src) && (s.src[s.pos] == '"' || s.src[s.pos] == '\\') {
			c = s.src[s.pos]
			s.pos++
		}
		v.WriteByte(c)
	}
	for s.pos < len(s.src) && (s.src[s.pos] == ' ' || s.src[s.pos] == '\t') {
		s.pos++
	}
	if !s.peekIs(']') {
		return "", "", false
	}
	s.pos++
	return name, v.String(), true
}

func isTagNameChar(c byte) bool {
	return c == '_' || c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z'
}
