package chess

// Status is the state of a position by the rules alone (no clocks, no
// history): checkmate > stalemate > insufficient material > still playing,
// the order of seeds/000 §8.2.
type Status uint8

const (
	StatusPlaying Status = iota
	StatusCheckmate
	StatusStalemate
	StatusInsufficientMaterial
)

// String returns the API spelling: "playing", "checkmate", "stalemate" or
// "insufficientMaterial".
func (s Status) String() string {
	switch s {
	case StatusCheckmate:
		return "checkmate"
	case StatusStalemate:
		return "stalemate"
	case StatusInsufficientMaterial:
		return "insufficientMaterial"
	}
	return "playing"
}

// Status returns the position's status.
func (p *Position) Status() Status {
	if p.CountMoves() == 0 {
		if p.InCheck() {
			return StatusCheckmate
		}
		return StatusStalemate
	}
	if p.InsufficientMaterial() {
		return StatusInsufficientMaterial
	}
	return StatusPlaying
}

// IsCheckmate reports whether the side to move is checkmated.
func (p *Position) IsCheckmate() bool { return p.InCheck() && p.CountMoves() == 0 }

// IsStalemate reports whether the side to move has no legal move and is not
// in check.
func (p *Position) IsStalemate() bool { return !p.InCheck() && p.CountMoves() == 0 }

// InsufficientMaterial reports the automatic draws of seeds/000 §6.2, a
// decisive subset of dead positions: K v K, K+B v K, K+N v K, and kings with
// bishops only, all bishops on squares of one colour. K+N+N v K is not a draw.
func (p *Position) InsufficientMaterial() bool {
	if p.pieces[Pawn]|p.pieces[Rook]|p.pieces[Queen] != 0 {
		return false
	}
	knights, bishops := p.pieces[Knight], p.pieces[Bishop]
	if knights != 0 {
		// One knight, nothing else besides the kings.
		return !knights.moreThanOne() && bishops == 0
	}
	return bishops&LightSquares == 0 || bishops&DarkSquares == 0
}

// CannotMate reports whether side c cannot checkmate by any legal sequence,
// by the conservative test of seeds/000 §6.6 used for the FIDE 6.9 exception
// (a player who runs out of time draws when the opponent cannot mate):
// c has a lone king; or c has K+N or K+B against a lone king; or c has only
// king and bishops on one square colour and the other side has only king and
// bishops on that same colour (or a lone king). Anything else counts as able
// to mate.
func (p *Position) CannotMate(c Color) bool {
	own, other := p.colors[c], p.colors[c^1]
	kings := p.pieces[King]
	ownRest := own &^ kings
	otherRest := other &^ kings
	if ownRest == 0 {
		return true
	}
	if !ownRest.moreThanOne() && ownRest&(p.pieces[Knight]|p.pieces[Bishop]) != 0 && otherRest == 0 {
		return true
	}
	bishops := p.pieces[Bishop]
	if ownRest&^bishops != 0 || otherRest&^bishops != 0 {
		return false
	}
	return bishops&LightSquares == 0 || bishops&DarkSquares == 0
}
