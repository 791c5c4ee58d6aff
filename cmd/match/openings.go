package main

import (
	"bufio"
	"fmt"
	"io"
	"strings"

	"chessapi/shared/chess"
)

// opening is a start position for a pair of games: a FEN and moves played
// from it (UCI), which are sent to the engines as "position fen F moves ...".
type opening struct {
	name  string
	fen   string
	moves []string
}

// readOpenings reads one opening per line: either "fen <FEN>" or SAN moves
// from the standard start ("1. e4 e5 2. Nf3 Nc6"), optionally followed by
// "; name". Blank lines and lines starting with # are skipped. Every move
// is checked for legality.
func readOpenings(r io.Reader) ([]opening, error) {
	var out []opening
	sc := bufio.NewScanner(r)
	lineNo := 0
	for sc.Scan() {
		lineNo++
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		name := ""
		if i := strings.Index(line, ";"); i >= 0 {
			name = strings.TrimSpace(line[i+1:])
			line = strings.TrimSpace(line[:i])
		}
		o, err := parseOpening(line)
		if err != nil {
			return nil, fmt.Errorf("openings line %d: %w", lineNo, err)
		}
		o.name = name
		if o.name == "" {
			o.name = line
		}
		out = append(out, o)
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("openings: %w", err)
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("openings: no opening found")
	}
	return out, nil
}

func parseOpening(line string) (opening, error) {
	if fen, ok := strings.CutPrefix(line, "fen "); ok {
		pos, err := chess.ParseFEN(fen)
		if err != nil {
			return opening{}, err
		}
		if pos.Status() != chess.StatusPlaying {
			return opening{}, fmt.Errorf("fen %q: game already over (%s)", fen, pos.Status())
		}
		return opening{fen: pos.FEN()}, nil
	}
	pos := chess.StartingPosition()
	o := opening{fen: pos.FEN()}
	for _, tok := range strings.Fields(line) {
		if strings.HasSuffix(tok, ".") {
			continue // move number
		}
		m, err := pos.ParseSAN(tok)
		if err != nil {
			return opening{}, fmt.Errorf("move %q: %w", tok, err)
		}
		o.moves = append(o.moves, pos.UCI(m))
		pos.Play(m)
	}
	if pos.Status() != chess.StatusPlaying {
		return opening{}, fmt.Errorf("game already over after the moves (%s)", pos.Status())
	}
	return o, nil
}
