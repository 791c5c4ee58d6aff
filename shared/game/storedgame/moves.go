package storedgame

import (
	"math"
	"strconv"
	"strings"

	"chessapi/shared/game"
)

// The moves section follows the header, as three columns of plain text:
//
//	"M<moves> <uci len> <san len> <times len>:" ucis sans times
//
// each column space-separated: the moves' UCI, their SAN, and their times
// as deltas (ms) from CreatedAt, then from the previous move. A game
// without moves has no section.
func appendMoves(b []byte, moves []game.MoveRecord, createdAt int64) []byte {
	if len(moves) == 0 {
		return b
	}
	var ucis, sans int
	for _, m := range moves {
		ucis += len(m.UCI) + 1
		sans += len(m.SAN) + 1
	}
	times := make([]byte, 0, 5*len(moves))
	prev := createdAt
	for i, m := range moves {
		if i > 0 {
			times = append(times, ' ')
		}
		times = strconv.AppendInt(times, m.At-prev, 10)
		prev = m.At
	}
	b = append(b, 'M')
	b = strconv.AppendInt(b, int64(len(moves)), 10)
	b = append(b, ' ')
	b = strconv.AppendInt(b, int64(ucis-1), 10)
	b = append(b, ' ')
	b = strconv.AppendInt(b, int64(sans-1), 10)
	b = append(b, ' ')
	b = strconv.AppendInt(b, int64(len(times)), 10)
	b = append(b, ':')
	for i, m := range moves {
		if i > 0 {
			b = append(b, ' ')
		}
		b = append(b, m.UCI...)
	}
	for i, m := range moves {
		if i > 0 {
			b = append(b, ' ')
		}
		b = append(b, m.SAN...)
	}
	return append(b, times...)
}

// movesSection is the parsed prefix of a moves section: the move count
// and the lengths of the three columns, and what follows the prefix.
type movesSection struct {
	n, ucis, sans, times int64
	rest                 []byte
}

// readMovesSection reads the prefix of the moves section at the front of
// b: present false when there is none.
func readMovesSection(b []byte) (sec movesSection, present bool, err error) {
	if len(b) == 0 || b[0] != 'M' {
		return movesSection{}, false, nil
	}
	n, rest, ok := logNumbers(b[1:], 4)
	if !ok || n[0] <= 0 || n[1] < 0 || n[2] < 0 || n[3] < 0 || n[1]+n[2]+n[3] > int64(len(rest)) || n[0] > int64(len(rest)) {
		return movesSection{}, true, &DecodeError{Reason: "moves section"}
	}
	return movesSection{n: n[0], ucis: n[1], sans: n[2], times: n[3], rest: rest}, true, nil
}

// movesTextLength is how many bytes of text the moves section at the front
// of b holds (0 when there is none or it is malformed: parseMoves says so).
func movesTextLength(b []byte) int {
	sec, _, err := readMovesSection(b)
	if err != nil {
		return 0
	}
	return int(sec.ucis + sec.sans)
}

// parseMoves reads the moves section at the front of b, if there is one:
// the moves with their UCI, SAN and time (game.Restore derives the rest),
// and what follows the section.
func parseMoves(b []byte, createdAt int64, strs *strs) ([]game.MoveRecord, []byte, error) {
	sec, present, err := readMovesSection(b)
	if err != nil {
		return nil, nil, err
	}
	if !present {
		return nil, b, nil
	}
	text, times := sec.rest[:sec.ucis+sec.sans], sec.rest[sec.ucis+sec.sans:sec.ucis+sec.sans+sec.times]
	all := strs.of(text)
	moves, err := movesFromColumns(int(sec.n), all[:sec.ucis], all[sec.ucis:], createdAt, times)
	return moves, sec.rest[sec.ucis+sec.sans+sec.times:], err
}

// movesFromColumns makes n moves from the space-separated UCI and SAN
// columns (sans empty: none stored, game.Restore computes them) and the
// time deltas, in one pass over the moves. The moves' strings are
// substrings of the columns. A column with fewer tokens than moves leaves
// the rest empty (game.Restore refuses an empty UCI and computes an empty
// SAN); one with more is refused here.
func movesFromColumns(n int, ucis, sans string, createdAt int64, times []byte) ([]game.MoveRecord, error) {
	moves := make([]game.MoveRecord, n, n+1) // room for the next move
	withSAN := sans != ""
	at := createdAt
	for i := range moves {
		m := &moves[i]
		m.UCI, ucis = nextToken(ucis)
		if withSAN {
			m.SAN, sans = nextToken(sans)
		}
		d, rest, ok := parseDecimal(times)
		last := i == n-1
		if !ok || (last && len(rest) != 0) || (!last && (len(rest) == 0 || rest[0] != ' ')) {
			return nil, &DecodeError{Reason: "move times"}
		}
		times = rest
		if !last {
			times = rest[1:]
		}
		at += d
		m.At = at
	}
	if ucis != "" || sans != "" {
		return nil, &DecodeError{Reason: "more move text than moves"}
	}
	return moves, nil
}

// nextToken splits the first space-separated token off s.
func nextToken(s string) (token, rest string) {
	if i := strings.IndexByte(s, ' '); i >= 0 {
		return s[:i], s[i+1:]
	}
	return s, ""
}

// parseDecimal reads an optionally negative decimal int64 from the front of
// b (false for no digits or one that does not fit).
func parseDecimal[T string | []byte](b T) (int64, T, bool) {
	neg := len(b) > 0 && b[0] == '-'
	if neg {
		b = b[1:]
	}
	var v uint64
	i := 0
	for ; i < len(b) && b[i] >= '0' && b[i] <= '9'; i++ {
		d := uint64(b[i] - '0')
		if v > (math.MaxUint64-d)/10 {
			return 0, b, false
		}
		v = v*10 + d
	}
	limit := uint64(math.MaxInt64)
	if neg {
		limit++ // -9223372036854775808
	}
	if i == 0 || v > limit {
		return 0, b, false
	}
	if neg {
		return -int64(v), b[i:], true
	}
	return int64(v), b[i:], true
}

// logNumbers reads n (at most 5) space-separated decimal numbers ending
// with ':' from the front of b.
func logNumbers(b []byte, n int) ([5]int64, []byte, bool) {
	var out [5]int64
	for i := range n {
		end := 0
		neg := false
		if end < len(b) && b[end] == '-' {
			neg = true
			end++
		}
		digits := end
		for end < len(b) && end-digits < 18 && b[end] >= '0' && b[end] <= '9' {
			out[i] = out[i]*10 + int64(b[end]-'0')
			end++
		}
		sep := byte(' ')
		if i == n-1 {
			sep = ':'
		}
		if end == digits || end >= len(b) || b[end] != sep {
			return out, nil, false
		}
		if neg {
			out[i] = -out[i]
		}
		b = b[end+1:]
	}
	return out, b, true
}
