package dataset

import (
	"bytes"
	"errors"
	"io"
	"math/rand/v2"
	"testing"

	"chessapi/shared/chess"
)

// randomRecords plays random games (standard and Chess960) and returns a
// record of every position with made-up score, result and move.
func randomRecords(t testing.TB, seed uint64, n int) []Record {
	t.Helper()
	rng := rand.New(rand.NewPCG(seed, 2))
	var out []Record
	for len(out) < n {
		pos := chess.StartingPosition()
		if rng.IntN(2) == 0 {
			var err error
			if pos, err = chess.Chess960Start(rng.IntN(960)); err != nil {
				t.Fatal(err)
			}
		}
		for ply := 0; ply < 200 && len(out) < n; ply++ {
			moves := pos.LegalMoves()
			if len(moves) == 0 {
				break
			}
			m := moves[rng.IntN(len(moves))]
			r := FromPosition(pos)
			r.Score = int16(rng.IntN(2*maxScore+1) - maxScore)
			r.Result = Result(rng.IntN(3))
			r.Ply = uint16(ply)
			r.Move = m
			out = append(out, r)
			pos.Play(m)
		}
	}
	return out
}

func TestRecordRoundTrip(t *testing.T) {
	for i, r := range randomRecords(t, 1, 2000) {
		b, err := r.MarshalBinary()
		if err != nil {
			t.Fatalf("record %d: MarshalBinary: %v", i, err)
		}
		if len(b) != RecordSize {
			t.Fatalf("record %d: %d bytes; want %d", i, len(b), RecordSize)
		}
		var got Record
		if err := got.UnmarshalBinary(b); err != nil {
			t.Fatalf("record %d: UnmarshalBinary: %v", i, err)
		}
		if got != r {
			t.Fatalf("record %d: round trip = %+v; want %+v", i, got, r)
		}
		pos, err := got.Position()
		if err != nil {
			t.Fatalf("record %d: Position: %v", i, err)
		}
		if back := FromPosition(pos); back.Board != r.Board || back.Turn != r.Turn {
			t.Fatalf("record %d: Position() = %s: another board", i, pos.FEN())
		}
	}
}

func TestFileRoundTrip(t *testing.T) {
	recs := randomRecords(t, 2, 500)
	var buf bytes.Buffer
	w := NewWriter(&buf)
	for i := range recs {
		if err := w.Write(&recs[i]); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	if w.Count() != int64(len(recs)) {
		t.Errorf("Count() = %d; want %d", w.Count(), len(recs))
	}
	if want := len(Header) + RecordSize*len(recs); buf.Len() != want {
		t.Fatalf("file is %d bytes; want %d", buf.Len(), want)
	}
	data := buf.Bytes()

	r := NewReader(bytes.NewReader(data))
	var rec Record
	for i := range recs {
		if err := r.Read(&rec); err != nil {
			t.Fatalf("Read %d: %v", i, err)
		}
		if rec != recs[i] {
			t.Fatalf("Read %d = %+v; want %+v", i, rec, recs[i])
		}
	}
	if err := r.Read(&rec); err != io.EOF {
		t.Errorf("Read after the last record = %v; want io.EOF", err)
	}

	all, err := ReadAll(bytes.NewReader(data))
	if err != nil || !bytes.Equal(all, data[len(Header):]) {
		t.Errorf("ReadAll = %d bytes, %v; want the %d record bytes", len(all), err, len(data)-len(Header))
	}

	// An appender continues a file without a second header.
	var more bytes.Buffer
	a := NewAppender(&more)
	if err := a.Write(&recs[0]); err != nil {
		t.Fatal(err)
	}
	_ = a.Flush()
	joined := append(append([]byte(nil), data...), more.Bytes()...)
	all, err = ReadAll(bytes.NewReader(joined))
	if err != nil || len(all) != RecordSize*(len(recs)+1) {
		t.Errorf("ReadAll of an appended file = %d bytes, %v; want %d records", len(all), err, len(recs)+1)
	}
}

func TestReaderErrors(t *testing.T) {
	recs := randomRecords(t, 3, 2)
	var buf bytes.Buffer
	w := NewWriter(&buf)
	for i := range recs {
		_ = w.Write(&recs[i])
	}
	_ = w.Flush()
	data := buf.Bytes()

	cases := []struct {
		name  string
		data  []byte
		want  error
		field string
	}{
		{"empty", nil, ErrHeader, "header"},
		{"bad header", append([]byte("NNUEDAT0"), data[8:]...), ErrHeader, "header"},
		{"cut record", data[:len(data)-5], io.ErrUnexpectedEOF, ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := ReadAll(bytes.NewReader(c.data))
			if !errors.Is(err, c.want) {
				t.Fatalf("ReadAll = %v; want %v", err, c.want)
			}
			var fe *FormatError
			if c.field != "" && (!errors.As(err, &fe) || fe.Field != c.field) {
				t.Errorf("ReadAll error %v: want a *FormatError for field %q", err, c.field)
			}
		})
	}
}

func TestUnmarshalRejects(t *testing.T) {
	var good []byte
	for _, r := range randomRecords(t, 4, 400) {
		if b, err := r.MarshalBinary(); err == nil && b[23] == 0 { // fewer than 31 pieces: padding to corrupt
			good = b
			break
		}
	}
	if good == nil {
		t.Fatal("no record with fewer than 31 pieces")
	}
	mutate := func(f func(b []byte)) []byte {
		b := append([]byte(nil), good...)
		f(b)
		return b
	}
	cases := []struct {
		name  string
		b     []byte
		want  error
		field string
	}{
		{"short", good[:31], ErrShortRecord, "record"},
		{"unknown code", mutate(func(b []byte) { b[8] = b[8]&0xf0 | 7 }), ErrPieceCode, "pieces"},
		{"padding", mutate(func(b []byte) { b[23] |= 0x10 }), ErrPadding, "pieces"},
		{"result", mutate(func(b []byte) { b[26] = 3 }), ErrResult, "result"},
		{"flags", mutate(func(b []byte) { b[27] |= 4 }), ErrFlags, "flags"},
		{"score", mutate(func(b []byte) { b[24], b[25] = 0xff, 0x7f }), ErrScore, "score"},
		{"no kings", mutate(func(b []byte) { clear(b[:24]) }), ErrKings, "pieces"},
	}
	for _, c := range cases {
		var r Record
		err := r.UnmarshalBinary(c.b)
		var fe *FormatError
		if !errors.Is(err, c.want) || !errors.As(err, &fe) || fe.Field != c.field {
			t.Errorf("%s: UnmarshalBinary = %v; want %v in field %q", c.name, err, c.want, c.field)
		}
	}
}

func TestMarshalRejects(t *testing.T) {
	r := randomRecords(t, 5, 1)[0]
	r.Board[0], r.Board[8] = chess.MakePiece(chess.White, chess.Pawn), chess.MakePiece(chess.Black, chess.King)
	if _, err := r.MarshalBinary(); !errors.Is(err, ErrPawnRank) && !errors.Is(err, ErrKings) {
		t.Errorf("MarshalBinary of a pawn on a1 and a third king = %v; want an error", err)
	}
	var full Record
	for s := range 33 {
		full.Board[s+8] = chess.MakePiece(chess.White, chess.Knight)
	}
	full.Board[60], full.Board[62] = chess.MakePiece(chess.White, chess.King), chess.MakePiece(chess.Black, chess.King)
	if _, err := full.MarshalBinary(); !errors.Is(err, ErrTooManyPiece) {
		t.Errorf("MarshalBinary of 35 pieces = %v; want ErrTooManyPiece", err)
	}
}

// FuzzUnmarshal: any 32 bytes either fail with a *FormatError or decode to
// a record whose encoding is exactly those bytes.
func FuzzUnmarshal(f *testing.F) {
	for _, r := range randomRecords(f, 6, 8) {
		b, _ := r.MarshalBinary()
		f.Add(b)
	}
	f.Add(make([]byte, RecordSize))
	f.Fuzz(func(t *testing.T, b []byte) {
		var r Record
		err := r.UnmarshalBinary(b)
		if err != nil {
			var fe *FormatError
			if !errors.As(err, &fe) {
				t.Fatalf("UnmarshalBinary error %v is not a *FormatError", err)
			}
			return
		}
		out, err := r.MarshalBinary()
		if err != nil {
			t.Fatalf("MarshalBinary of a decoded record: %v", err)
		}
		if !bytes.Equal(out, b) {
			t.Fatalf("re-encoded %x; want %x", out, b)
		}
	})
}
