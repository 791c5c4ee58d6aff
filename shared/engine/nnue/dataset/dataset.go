// Package dataset is the training data of the learned evaluation: positions
// from the engine's own games, each with the search score and the game's
// result, in a compact fixed-size binary record.
//
// A file is an 8-byte header followed by 32-byte records:
//
//	header   "NNUEDAT1"
//	record   offset size  field
//	         0      8     occupancy: uint64 little-endian, bit s set when square s
//	                      (a1 = 0, b1 = 1, … h8 = 63) holds a piece
//	         8      16    pieces: one 4-bit code per occupied square, in rising
//	                      square order, two per byte, low nibble first; code =
//	                      colour<<3 | type (chess.Piece: pawn 1 … king 6, black
//	                      adds 8); nibbles after the last piece are zero
//	         24     2     score: int16 little-endian, centipawns, from the side
//	                      to move (the search score of the position; never a mate)
//	         26     1     result: 0 side to move lost, 1 draw, 2 side to move won
//	         27     1     flags: bit 0 black to move, bit 1 Chess960 game; other
//	                      bits zero
//	         28     2     ply: uint16 little-endian, plies from the game's start
//	         30     2     move: uint16 little-endian, the move the search chose
//	                      (chess.Move encoding)
//
// The layout needs at most 32 pieces, which every position reachable in a
// game has. Records are independent, so files can be concatenated, split
// and shuffled; a writer appends whole games, so a file cut short by a crash
// is repaired by truncating it to the last complete game (cmd/datagen keeps
// that length in its state file).
//
// Unmarshalling is strict: anything but the canonical encoding of a valid
// record (a king of each colour, no pawn on the first or last rank, known
// codes, zero padding and reserved bits, a result of 0–2) is an error, so
// marshal(unmarshal(b)) == b for every b that decodes.
package dataset

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math/bits"

	"chessapi/shared/chess"
)

// Header starts every data file.
const Header = "NNUEDAT1"

// RecordSize is the size of one encoded record in bytes.
const RecordSize = 32

// MaxPieces is the most pieces a record holds.
const MaxPieces = 32

// Result is a game's outcome from the side to move of a record.
type Result uint8

const (
	Loss Result = 0
	Draw Result = 1
	Win  Result = 2
)

// Score returns the result as a target in [0, 1]: 0, 0.5 or 1.
func (r Result) Score() float32 { return float32(r) / 2 }

// Flip returns the result from the other side's point of view.
func (r Result) Flip() Result { return 2 - r }

// Record is one training position.
type Record struct {
	Board    [64]chess.Piece // by square, a1 = 0
	Turn     chess.Color     // side to move
	Score    int16           // search score in centipawns, side to move
	Result   Result          // game result, side to move
	Chess960 bool            // the game was Chess960
	Ply      uint16          // plies from the game's start
	Move     chess.Move      // the move the search chose
}

// FromPosition fills a record's board and side to move from pos.
func FromPosition(pos *chess.Position) Record {
	var r Record
	for s := chess.Square(0); s < 64; s++ {
		r.Board[s] = pos.PieceAt(s)
	}
	r.Turn = pos.Turn()
	r.Chess960 = pos.Chess960()
	return r
}

// Errors of UnmarshalBinary and Reader; each is wrapped in a *FormatError.
var (
	ErrHeader       = errors.New("not a data file (bad header)")
	ErrShortRecord  = errors.New("record is not 32 bytes")
	ErrTooManyPiece = errors.New("more than 32 pieces")
	ErrPieceCode    = errors.New("unknown piece code")
	ErrPadding      = errors.New("non-zero padding after the last piece")
	ErrKings        = errors.New("not exactly one king of each colour")
	ErrPawnRank     = errors.New("pawn on the first or last rank")
	ErrResult       = errors.New("result is not 0, 1 or 2")
	ErrFlags        = errors.New("reserved flag bits set")
	ErrScore        = errors.New("score outside ±32000")
)

// FormatError reports a malformed record or file: the field and why.
type FormatError struct {
	Field string // "header", "occupancy", "pieces", "score", "result", "flags"
	Err   error
}

func (e *FormatError) Error() string { return "dataset: " + e.Field + ": " + e.Err.Error() }

// Unwrap returns the reason (one of the Err values above).
func (e *FormatError) Unwrap() error { return e.Err }

// maxScore bounds stored scores; mate scores are never stored.
const maxScore = 32000

// MarshalBinary encodes the record.
func (r *Record) MarshalBinary() ([]byte, error) {
	return r.AppendBinary(make([]byte, 0, RecordSize))
}

// AppendBinary appends the record's encoding to b.
func (r *Record) AppendBinary(b []byte) ([]byte, error) {
	if err := r.validate(); err != nil {
		return b, err
	}
	var out [RecordSize]byte
	var occ uint64
	n := 0
	for s, pc := range r.Board {
		if pc == chess.NoPiece {
			continue
		}
		occ |= 1 << s
		out[8+n/2] |= byte(pc) << (4 * (n & 1))
		n++
	}
	binary.LittleEndian.PutUint64(out[0:], occ)
	binary.LittleEndian.PutUint16(out[24:], uint16(r.Score))
	out[26] = byte(r.Result)
	if r.Turn == chess.Black {
		out[27] |= 1
	}
	if r.Chess960 {
		out[27] |= 2
	}
	binary.LittleEndian.PutUint16(out[28:], r.Ply)
	binary.LittleEndian.PutUint16(out[30:], uint16(r.Move))
	return append(b, out[:]...), nil
}

// validate checks what the encoding cannot hold or the decoder would refuse.
func (r *Record) validate() error {
	n := 0
	var kings [2]int
	for s, pc := range r.Board {
		if pc == chess.NoPiece {
			continue
		}
		n++
		if !validCode(byte(pc)) {
			return &FormatError{"pieces", ErrPieceCode}
		}
		if pc.Type() == chess.King {
			kings[pc.Color()]++
		}
		if pc.Type() == chess.Pawn && (s < 8 || s >= 56) {
			return &FormatError{"pieces", ErrPawnRank}
		}
	}
	switch {
	case n > MaxPieces:
		return &FormatError{"occupancy", ErrTooManyPiece}
	case kings != [2]int{1, 1}:
		return &FormatError{"pieces", ErrKings}
	case r.Result > Win:
		return &FormatError{"result", ErrResult}
	case r.Score > maxScore || r.Score < -maxScore:
		return &FormatError{"score", ErrScore}
	case r.Turn > chess.Black:
		return &FormatError{"flags", ErrFlags}
	}
	return nil
}

func validCode(c byte) bool {
	t := chess.PieceType(c & 7)
	return t >= chess.Pawn && t <= chess.King
}

// UnmarshalBinary decodes one record of exactly RecordSize bytes.
func (r *Record) UnmarshalBinary(b []byte) error {
	if len(b) != RecordSize {
		return &FormatError{"record", ErrShortRecord}
	}
	occ := binary.LittleEndian.Uint64(b[0:])
	n := bits.OnesCount64(occ)
	if n > MaxPieces {
		return &FormatError{"occupancy", ErrTooManyPiece}
	}
	var out Record
	i := 0
	for o := occ; o != 0; o &= o - 1 {
		s := bits.TrailingZeros64(o)
		code := b[8+i/2] >> (4 * (i & 1)) & 15
		if !validCode(code) {
			return &FormatError{"pieces", ErrPieceCode}
		}
		out.Board[s] = chess.Piece(code)
		i++
	}
	for j := n; j < 2*16; j++ {
		if b[8+j/2]>>(4*(j&1))&15 != 0 {
			return &FormatError{"pieces", ErrPadding}
		}
	}
	out.Score = int16(binary.LittleEndian.Uint16(b[24:]))
	out.Result = Result(b[26])
	flags := b[27]
	if flags&^3 != 0 {
		return &FormatError{"flags", ErrFlags}
	}
	out.Turn = chess.Color(flags & 1)
	out.Chess960 = flags&2 != 0
	out.Ply = binary.LittleEndian.Uint16(b[28:])
	out.Move = chess.Move(binary.LittleEndian.Uint16(b[30:]))
	if err := out.validate(); err != nil {
		return err
	}
	*r = out
	return nil
}

// Writer writes a data file: the header on the first Write, then records.
type Writer struct {
	w       *bufio.Writer
	started bool
	buf     []byte
	n       int64
}

// NewWriter returns a Writer that writes the header before the first
// record. Use NewAppender to continue an existing file.
func NewWriter(w io.Writer) *Writer { return &Writer{w: bufio.NewWriterSize(w, 1<<16)} }

// NewAppender returns a Writer for a file that already has its header.
func NewAppender(w io.Writer) *Writer {
	return &Writer{w: bufio.NewWriterSize(w, 1<<16), started: true}
}

// Write encodes and buffers one record.
func (w *Writer) Write(r *Record) error {
	if !w.started {
		if _, err := w.w.WriteString(Header); err != nil {
			return err
		}
		w.started = true
	}
	var err error
	w.buf, err = r.AppendBinary(w.buf[:0])
	if err != nil {
		return err
	}
	w.n++
	_, err = w.w.Write(w.buf)
	return err
}

// Count returns the records written so far.
func (w *Writer) Count() int64 { return w.n }

// Flush writes buffered records to the underlying writer.
func (w *Writer) Flush() error { return w.w.Flush() }

// Reader reads a data file record by record.
type Reader struct {
	r      *bufio.Reader
	header bool
	buf    [RecordSize]byte
	n      int64
}

// NewReader returns a Reader; the header is checked on the first Read.
func NewReader(r io.Reader) *Reader { return &Reader{r: bufio.NewReaderSize(r, 1<<16)} }

// Read decodes the next record into rec. It returns io.EOF after the last
// one, a *FormatError for a bad header or record, and io.ErrUnexpectedEOF
// for a file that ends inside a record.
func (r *Reader) Read(rec *Record) error {
	if !r.header {
		var h [len(Header)]byte
		if _, err := io.ReadFull(r.r, h[:]); err != nil {
			if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
				return &FormatError{"header", ErrHeader}
			}
			return err
		}
		if string(h[:]) != Header {
			return &FormatError{"header", ErrHeader}
		}
		r.header = true
	}
	if _, err := io.ReadFull(r.r, r.buf[:]); err != nil {
		return err
	}
	if err := rec.UnmarshalBinary(r.buf[:]); err != nil {
		return fmt.Errorf("record %d: %w", r.n, err)
	}
	r.n++
	return nil
}

// ReadAll reads a whole data file into one slice of encoded records,
// RecordSize bytes each, checking the header and every record. Training
// keeps records in this form (32 bytes a position) and decodes them as it
// goes.
func ReadAll(r io.Reader) ([]byte, error) {
	rd := NewReader(r)
	var out []byte
	var rec Record
	for {
		err := rd.Read(&rec)
		if errors.Is(err, io.EOF) {
			return out, nil
		}
		if err != nil {
			return nil, err
		}
		out = append(out, rd.buf[:]...)
	}
}

// Position returns the record's position: its board and side to move,
// without castling rights or en passant (the record does not keep them),
// clocks zero. It fails for a board the rules refuse (a side to move that
// gives check, say), which a record from a game never has.
func (r *Record) Position() (*chess.Position, error) {
	b := make([]byte, 0, 90)
	for rank := 7; rank >= 0; rank-- {
		empty := 0
		for file := range 8 {
			pc := r.Board[rank*8+file]
			if pc == chess.NoPiece {
				empty++
				continue
			}
			if empty > 0 {
				b = append(b, byte('0'+empty))
				empty = 0
			}
			b = append(b, pc.Letter())
		}
		if empty > 0 {
			b = append(b, byte('0'+empty))
		}
		if rank > 0 {
			b = append(b, '/')
		}
	}
	if r.Turn == chess.White {
		b = append(b, " w - - 0 1"...)
	} else {
		b = append(b, " b - - 0 1"...)
	}
	return chess.ParseFEN(string(b))
}
