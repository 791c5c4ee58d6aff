package chess

import (
	"fmt"
	"strings"
)

// Chess960StandardIndex is the Scharnagl number of the standard setup.
const Chess960StandardIndex = 518

// Chess960BackRank returns the white back rank (files a..h, upper-case
// letters) of Chess960 start position n, 0 <= n <= 959, by Scharnagl's
// numbering (seeds/000 §4): light-square bishop, dark-square bishop, queen,
// the knight pair, then R K R in the three squares left.
func Chess960BackRank(n int) (string, error) {
	if n < 0 || n > 959 {
		return "", fmt.Errorf("chess: chess960 index %d out of range 0-959", n)
	}
	var rank [8]byte
	rank[2*(n%4)+1] = 'B' // light squares: b, d, f, h
	n /= 4
	rank[2*(n%4)] = 'B' // dark squares: a, c, e, g
	n /= 4
	placeNth(&rank, n%6, 'Q')
	n /= 6
	knightPairs := [10][2]int{{0, 1}, {0, 2}, {0, 3}, {0, 4}, {1, 2}, {1, 3}, {1, 4}, {2, 3}, {2, 4}, {3, 4}}
	pair := knightPairs[n]
	// Place the second knight first so the first one's index is unaffected.
	placeNth(&rank, pair[1], 'N')
	placeNth(&rank, pair[0], 'N')
	for _, c := range []byte("RKR") {
		placeNth(&rank, 0, c)
	}
	return string(rank[:]), nil
}

// placeNth puts c on the k-th (0-based) empty square from the a-file.
func placeNth(rank *[8]byte, k int, c byte) {
	for i := range rank {
		if rank[i] == 0 {
			if k == 0 {
				rank[i] = c
				return
			}
			k--
		}
	}
}

// Chess960StartFEN returns the Shredder-FEN of Chess960 start position n.
func Chess960StartFEN(n int) (string, error) {
	back, err := Chess960BackRank(n)
	if err != nil {
		return "", err
	}
	var rooks []byte
	for i := len(back) - 1; i >= 0; i-- {
		if back[i] == 'R' {
			rooks = append(rooks, 'A'+byte(i))
		}
	}
	castling := string(rooks) + strings.ToLower(string(rooks))
	return strings.ToLower(back) + "/pppppppp/8/8/8/8/PPPPPPPP/" + back + " w " + castling + " - 0 1", nil
}

// Chess960Start returns Chess960 start position n as a Position with
// Chess960 conventions (also for n = 518, which looks standard).
func Chess960Start(n int) (*Position, error) {
	fen, err := Chess960StartFEN(n)
	if err != nil {
		return nil, err
	}
	return ParseFENVariant(fen, VariantChess960)
}
