package storedgame

import (
	"bytes"
	"compress/gzip"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"chessapi/shared/game"
)

// The records in testdata/records/<commit> are what the writer of that
// commit made itself (generate/generate.sh): each game's stored form and
// the plain JSON of the state it stored.

// currentWriter is the commit whose records Encode still writes byte for
// byte.
const currentWriter = "001fbd3"

// writers are the commits whose records the tests keep, with the formats
// they wrote (each must occur).
var writers = map[string][]string{
	"7025de5":     {"json header, moves in it, untagged log", "deflate"},
	"bb98be9":     {"json header, moves section", "zstd"},
	"8925936":     {"text"},
	currentWriter: {"text"},
}

// record is one stored game of a writer.
type record struct {
	writer, name string
	stored       []byte
	json         []byte // the plain JSON of the state, without fenAfter
}

func readRecords(t testing.TB) []record {
	t.Helper()
	var recs []record
	for writer := range writers {
		paths, err := filepath.Glob(filepath.Join("testdata", "records", writer, "*.stored"))
		if err != nil || len(paths) == 0 {
			t.Fatalf("no records of writer %s: %v", writer, err)
		}
		for _, p := range paths {
			stored, err := os.ReadFile(p)
			if err != nil {
				t.Fatal(err)
			}
			base := strings.TrimSuffix(p, ".stored")
			js, err := os.ReadFile(base + ".json")
			if errors.Is(err, fs.ErrNotExist) {
				js, err = readGzip(base + ".json.gz")
			}
			if err != nil {
				t.Fatal(err)
			}
			recs = append(recs, record{writer: writer, name: filepath.Base(base), stored: stored, json: js})
		}
	}
	return recs
}

func readGzip(path string) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	z, err := gzip.NewReader(f)
	if err != nil {
		return nil, err
	}
	return io.ReadAll(z)
}

// formatOf names the form of a record.
func formatOf(b []byte) string {
	switch {
	case b[0] == formatText && isZstdFrame(b[1:]):
		return "zstd"
	case b[0] == formatText:
		return "text"
	case b[0] == formatDeflate:
		return "deflate"
	case b[0] == formatJSONHeader && bytes.Contains(b, []byte(`"m":"`)):
		return "json header, moves in it, untagged log"
	case b[0] == formatJSONHeader:
		return "json header, moves section"
	}
	return fmt.Sprintf("format %d", b[0])
}

// TestRecordsOfEveryWriter decodes every record every writer made: the
// state is the one the writer stored (every field its JSON has is equal,
// the derived ones included: the replay rebuilds them), it round-trips
// through the current form, and the current writer's records are
// re-encoded byte for byte.
func TestRecordsOfEveryWriter(t *testing.T) {
	formats := map[string]map[string]bool{}
	for _, rec := range readRecords(t) {
		t.Run(rec.writer+"/"+rec.name, func(t *testing.T) {
			data := bytes.Clone(rec.stored) // Decode takes its input over
			s, err := Decode(data)
			if err != nil {
				t.Fatalf("Decode = %v", err)
			}
			if formats[rec.writer] == nil {
				formats[rec.writer] = map[string]bool{}
			}
			formats[rec.writer][formatOf(rec.stored)] = true
			assertJSONSubset(t, s, rec.json)
			again, err := Decode(Encode(s))
			if err != nil {
				t.Fatalf("Decode(Encode(decoded)) = %v", err)
			}
			assertSameState(t, again, s, "re-encoded record")
			if rec.writer == currentWriter && !bytes.Equal(Encode(s), rec.stored) {
				t.Errorf("Encode differs from the current writer's record:\n got: %q\nwant: %q", Encode(s), rec.stored)
			}
		})
	}
	for writer, want := range writers {
		for _, f := range want {
			if !formats[writer][f] {
				t.Errorf("writer %s: no record in the form %q (have %v)", writer, f, formats[writer])
			}
		}
	}
}

// assertJSONSubset checks that every value of the writer's JSON is the
// decoded state's (fields added since are not in it).
func assertJSONSubset(t *testing.T, s *game.State, want []byte) {
	t.Helper()
	got, err := json.Marshal(s)
	if err != nil {
		t.Fatal(err)
	}
	var g, w any
	want = checkRemovedFields(t, s, want)
	for _, x := range []struct {
		b []byte
		v *any
	}{{got, &g}, {want, &w}} {
		d := json.NewDecoder(bytes.NewReader(x.b))
		d.UseNumber()
		if err := d.Decode(x.v); err != nil {
			t.Fatal(err)
		}
	}
	if path, ok := jsonSubset(g, w, "$"); !ok {
		t.Errorf("decoded state differs from the stored one at %s\n got: %s\nwant: %s", path, got, want)
	}
}

// checkRemovedFields checks the members a writer's State had that the
// State no longer has (they are derived now, on demand) against what
// derives them today, and returns the JSON without them.
func checkRemovedFields(t *testing.T, s *game.State, js []byte) []byte {
	t.Helper()
	var m map[string]json.RawMessage
	if err := json.Unmarshal(js, &m); err != nil {
		t.Fatal(err)
	}
	if raw, ok := m["repetition"]; ok { // the repetition table (until bb98be9)
		var stored map[string]int
		if err := json.Unmarshal(raw, &stored); err != nil {
			t.Fatal(err)
		}
		replayed := map[string]int{repetitionKey(s.StartFEN): 1}
		for _, mv := range s.Moves {
			replayed[repetitionKey(mv.FENAfter)]++
		}
		if !reflect.DeepEqual(replayed, stored) {
			t.Errorf("repetition table of the replay %v; the writer stored %v", replayed, stored)
		}
		delete(m, "repetition")
	}
	if raw, ok := m["result"]; ok && string(raw) != "null" {
		// The result's Korean summary (until bb98be9) is the edge's text
		// now; what it says (winner, reason, move count) is compared.
		var r map[string]json.RawMessage
		if err := json.Unmarshal(raw, &r); err != nil {
			t.Fatal(err)
		}
		delete(r, "summaryKo")
		m["result"], _ = json.Marshal(r)
	}
	out, err := json.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// repetitionKey is the first four fields of a FEN, what repetition counts.
func repetitionKey(fen string) string {
	f := strings.Fields(fen)
	return strings.Join(f[:min(4, len(f))], " ")
}

// jsonSubset reports whether want's every object member is in got with
// the same value (arrays element by element, of the same length), and
// where not.
func jsonSubset(got, want any, path string) (string, bool) {
	switch w := want.(type) {
	case map[string]any:
		g, ok := got.(map[string]any)
		if !ok {
			return path, false
		}
		for k, wv := range w {
			if p, ok := jsonSubset(g[k], wv, path+"."+k); !ok {
				return p, false
			}
		}
		return "", true
	case []any:
		g, ok := got.([]any)
		if !ok || len(g) != len(w) {
			return path, false
		}
		for i := range w {
			if p, ok := jsonSubset(g[i], w[i], fmt.Sprintf("%s[%d]", path, i)); !ok {
				return p, false
			}
		}
		return "", true
	}
	return path, reflect.DeepEqual(got, want)
}

// TestMigrateV1 reads the version 1 ChessState of the TypeScript service
// (testdata/records/v1-typescript).
func TestMigrateV1(t *testing.T) {
	t.Run("playing", func(t *testing.T) {
		s := decodeFile(t, "playing.json")
		if s.StateVersion != game.StateVersion || s.Options.Variant != game.VariantStandard || s.Chess960Index != nil {
			t.Errorf("stateVersion %d variant %s index %v; want 2, standard, null", s.StateVersion, s.Options.Variant, s.Chess960Index)
		}
		if s.Seats[white].PlayerID != "p-white" || s.Seats[black].PlayerID != "p-black" || s.Phase != game.PhasePlaying || s.Turn() != black {
			t.Errorf("seats %+v phase %s turn %s", s.Seats, s.Phase, s.Turn())
		}
		if s.Moves[2].SAN != "Nf3" || s.Clock.RemainingMs[white] != 599000 || len(s.History()) != 3 {
			t.Errorf("moves %+v clock %+v", s.Moves, s.Clock)
		}
		// The migrated game plays on and stores in the current form.
		s.GameID, s.Version = "v1", 1
		s = reduce(t, s, act(black, move("b8c6")), time.UnixMilli(1700000009000+5000))
		again, err := Decode(Encode(s))
		if err != nil {
			t.Fatal(err)
		}
		assertSameState(t, again, s, "migrated game after a move")
	})
	t.Run("finished is read as standard", func(t *testing.T) {
		s := decodeFile(t, "finished.json")
		r := s.Result
		if s.Phase != game.PhaseFinished || r == nil || r.Reason != game.ReasonCheckmate || *r.Winner != white || r.MoveCount != 4 {
			t.Fatalf("result %+v", r)
		}
		if s.Moves[6].FENAfter != s.FEN || s.Options.DrawMode != game.DrawFIDE || s.Options.Undo != game.UndoOff {
			t.Errorf("fen %q options %+v", s.FEN, s.Options)
		}
		if pgn, err := game.PGN(s); err != nil || !strings.Contains(pgn, "4. Qxf7#") || !strings.HasSuffix(pgn, " 1-0\n") {
			t.Errorf("PGN = %q, %v", pgn, err)
		}
	})
	t.Run("fen that disagrees with the moves is refused", func(t *testing.T) {
		data, _ := os.ReadFile(filepath.Join("testdata", "records", "v1-typescript", "playing.json"))
		data = bytes.Replace(data, []byte(`"fen": "rnbqkbnr/pppp1ppp/8/4p3/4P3/5N2`), []byte(`"fen": "rnbqkbnr/pppp1ppp/8/4p3/4P3/2N5`), 1)
		var de *DecodeError
		if _, err := Decode(data); !errors.As(err, &de) {
			t.Errorf("Decode = %v; want a *DecodeError for a v1 state whose fen differs from its moves", err)
		}
	})
}

func decodeFile(t *testing.T, name string) *game.State {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("testdata", "records", "v1-typescript", name))
	if err != nil {
		t.Fatal(err)
	}
	s, err := Decode(data)
	if err != nil {
		t.Fatalf("Decode(%s) = %v", name, err)
	}
	return s
}
