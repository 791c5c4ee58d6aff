package main

import (
	"bytes"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"chessapi/shared/chess"
	"chessapi/shared/engine/nnue/dataset"
)

// smallRun is a datagen command line for a quick data set in dir: one
// thread, the smallest node budget, short games.
func smallRun(dir string, games string, extra ...string) []string {
	return append([]string{"-out", dir, "-eval", "classical", "-threads", "1", "-nodes", "512",
		"-games", games, "-seed", "5", "-minply", "4", "-maxplies", "120", "-book", "../match/testdata/openings.txt",
		"-report", "1h"}, extra...)
}

func readRecords(t *testing.T, path string) []dataset.Record {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	r := dataset.NewReader(f)
	var out []dataset.Record
	for {
		var rec dataset.Record
		err := r.Read(&rec)
		if err == io.EOF {
			return out
		}
		if err != nil {
			t.Fatalf("%s: record %d: %v", path, len(out), err)
		}
		out = append(out, rec)
	}
}

// TestDatagenWritesQuietPositions plays a few games and checks what the
// command promises of every record: a legal position not in check, from
// ply -minply on, a score that is no mate, a chosen move that is legal
// (or castling) and neither a capture nor a promotion; and games whose results agree
// with the side to move.
func TestDatagenWritesQuietPositions(t *testing.T) {
	dir := t.TempDir()
	var out bytes.Buffer
	if err := run(smallRun(dir, "3"), &out); err != nil {
		t.Fatalf("datagen: %v\n%s", err, out.String())
	}
	if !strings.Contains(out.String(), "datagen: 3 games") {
		t.Errorf("summary missing:\n%s", out.String())
	}
	recs := readRecords(t, filepath.Join(dir, "part-0.bin"))
	if len(recs) < 30 {
		t.Fatalf("%d records from 3 games; want at least 30", len(recs))
	}
	for i := range recs {
		rec := &recs[i]
		pos, err := rec.Position()
		if err != nil {
			t.Fatalf("record %d: %v", i, err)
		}
		if pos.InCheck() {
			t.Errorf("record %d in check: %s", i, pos.FEN())
		}
		if rec.Ply < 4 {
			t.Errorf("record %d at ply %d, before -minply 4", i, rec.Ply)
		}
		if rec.Score > 4000 || rec.Score < -4000 {
			t.Errorf("record %d: score %d beyond ±4000", i, rec.Score)
		}
		// A record keeps no castling rights: a castling move (king takes
		// own rook) cannot be replayed on its position.
		legal := rec.Move.IsCastling() && pos.PieceAt(rec.Move.From()).Type() == chess.King
		for _, m := range pos.LegalMoves() {
			legal = legal || m == rec.Move
		}
		if !legal {
			t.Fatalf("record %d: move %v is not legal in %s", i, rec.Move, pos.FEN())
		}
		if isNoisy(pos, rec.Move) || rec.Move.Kind() == chess.KindPromotion {
			t.Errorf("record %d: move %s is a capture or promotion in %s", i, pos.UCI(rec.Move), pos.FEN())
		}
		// Within a game (plies rising) the result seen by the side to move
		// flips with the side to move.
		if i > 0 && recs[i-1].Ply < rec.Ply {
			prev := recs[i-1].Result
			if recs[i-1].Turn != rec.Turn {
				prev = prev.Flip()
			}
			if prev != rec.Result {
				t.Errorf("records %d and %d of one game disagree on its result", i-1, i)
			}
		}
	}
}

// TestDatagenResumes: a run stopped after two games and continued to four
// (with garbage after the last finished game, as a crash mid-game leaves)
// writes the same file as one run of four games.
func TestDatagenResumes(t *testing.T) {
	whole, parts := t.TempDir(), t.TempDir()
	if err := run(smallRun(whole, "4"), io.Discard); err != nil {
		t.Fatal(err)
	}
	if err := run(smallRun(parts, "2"), io.Discard); err != nil {
		t.Fatal(err)
	}
	f, err := os.OpenFile(filepath.Join(parts, "part-0.bin"), os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.Write(bytes.Repeat([]byte{0xAB}, 45)); err != nil {
		t.Fatal(err)
	}
	f.Close()
	if err := run(smallRun(parts, "4"), io.Discard); err != nil {
		t.Fatal(err)
	}
	a, err := os.ReadFile(filepath.Join(whole, "part-0.bin"))
	if err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(filepath.Join(parts, "part-0.bin"))
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(a, b) {
		t.Errorf("resumed file (%d bytes) differs from the uninterrupted one (%d bytes)", len(b), len(a))
	}
	// Another seed or node budget on the same directory is refused.
	if err := run(append(smallRun(parts, "5"), "-seed", "6"), io.Discard); err == nil || !strings.Contains(err.Error(), "use another -out") {
		t.Errorf("resume with another seed: err = %v; want a refusal", err)
	}
}

func TestDatagenFlagErrors(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"-out", t.TempDir()}, "-eval"},
		{[]string{"-out", t.TempDir(), "-eval", "hce"}, "-eval"},
		{[]string{"-eval", "classical"}, "-out"},
		{[]string{"-out", t.TempDir(), "-eval", "classical", "-nodes", "10"}, "-nodes"},
		{[]string{"-out", t.TempDir(), "-eval", "classical", "-threads", "0"}, "-threads"},
		{[]string{"-out", t.TempDir(), "-eval", "classical", "-minply", "50", "-maxplies", "20"}, "-minply"},
		{[]string{"-make-openings", "4"}, "-openings-out"},
	} {
		if _, err := parseFlags(tc.args); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("parseFlags(%q) = %v; want an error naming %s", tc.args, err, tc.want)
		}
	}
}
