package chess

import (
	"bufio"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

type perftCase struct {
	file, fen string
	line      int
	depths    []uint64 // depths[d-1] = nodes at depth d; 0 = not listed
}

func loadPerftSuite(t testing.TB, name string) []perftCase {
	t.Helper()
	f, err := os.Open(filepath.Join("testdata", "perft", name))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var cases []perftCase
	sc := bufio.NewScanner(f)
	for line := 1; sc.Scan(); line++ {
		text := strings.TrimSpace(sc.Text())
		if text == "" || text[0] == '#' {
			continue
		}
		parts := strings.Split(text, ";")
		c := perftCase{file: name, fen: strings.TrimSpace(parts[0]), line: line}
		for _, part := range parts[1:] {
			fs := strings.Fields(part)
			if len(fs) != 2 || fs[0][0] != 'D' {
				t.Fatalf("%s:%d: bad depth field %q", name, line, part)
			}
			d, err1 := strconv.Atoi(fs[0][1:])
			n, err2 := strconv.ParseUint(fs[1], 10, 64)
			if err1 != nil || err2 != nil || d < 1 {
				t.Fatalf("%s:%d: bad depth field %q", name, line, part)
			}
			for len(c.depths) < d {
				c.depths = append(c.depths, 0)
			}
			c.depths[d-1] = n
		}
		cases = append(cases, c)
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return cases
}

// perftNodeBudget is the largest perft the default test run performs for one
// position and depth; PERFT_DEEP=1 lifts it (minutes), -short lowers it.
func perftNodeBudget() uint64 {
	switch {
	case os.Getenv("PERFT_DEEP") == "1":
		return ^uint64(0)
	case testing.Short():
		return 200_000
	default:
		return 20_000_000
	}
}

func TestPerftSuites(t *testing.T) {
	budget := perftNodeBudget()
	for _, suite := range []string{
		"standard.epd",
		"standard_suite_ethereal.epd",
		"chess960.epd",
		"chess960_stockfish_perftsh.epd",
		"chess960_xfen_tricky.epd",
	} {
		cases := loadPerftSuite(t, suite)
		// Chunks run in parallel so a deep run uses every core.
		const chunk = 64
		for lo := 0; lo < len(cases); lo += chunk {
			part := cases[lo:min(lo+chunk, len(cases))]
			t.Run(fmt.Sprintf("%s/lines-%d-%d", suite, part[0].line, part[len(part)-1].line), func(t *testing.T) {
				t.Parallel()
				for _, c := range part {
					checkPerftCase(t, c, budget)
				}
			})
		}
	}
}

func checkPerftCase(t *testing.T, c perftCase, budget uint64) {
	t.Helper()
	p, err := ParseFEN(c.fen)
	if err != nil {
		t.Errorf("%s:%d: ParseFEN(%q): %v", c.file, c.line, c.fen, err)
		return
	}
	fenBefore, hashBefore := p.FEN(), p.Hash()
	for d, want := range c.depths {
		if want == 0 || want > budget {
			continue
		}
		if got := p.Perft(d + 1); got != want {
			t.Errorf("%s:%d: Perft(%q, %d) = %d; want %d", c.file, c.line, c.fen, d+1, got, want)
			break
		}
	}
	if p.FEN() != fenBefore || p.Hash() != hashBefore {
		t.Errorf("%s:%d: position changed by perft: %q (%x) -> %q (%x)", c.file, c.line, fenBefore, hashBefore, p.FEN(), p.Hash())
	}
}

// TestPerftFull checks the unbulked perft (every leaf played) on the shallow
// depths of the main positions, so Play is exercised at every node.
func TestPerftFull(t *testing.T) {
	for _, c := range loadPerftSuite(t, "standard.epd") {
		p, err := ParseFEN(c.fen)
		if err != nil {
			t.Fatal(err)
		}
		for d, want := range c.depths {
			if want > 500_000 {
				break
			}
			if got := p.PerftFull(d + 1); got != want {
				t.Errorf("PerftFull(%q, %d) = %d; want %d", c.fen, d+1, got, want)
			}
		}
	}
}
