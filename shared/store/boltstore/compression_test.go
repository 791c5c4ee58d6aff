package boltstore

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"testing"
	"time"

	bolt "go.etcd.io/bbolt"

	"chessapi/shared/game"
	"chessapi/shared/game/storedgame"
	"chessapi/shared/service"
	"chessapi/shared/store/internal/statezstd"
)

// gameRecords returns the stored form of every version of one game with
// clocks and request ids, random legal moves, a take-back of two plies at
// ply 30: what the service writes, one record per write.
func gameRecords(t testing.TB, plies int) [][]byte {
	t.Helper()
	t0 := time.Date(2026, 12, 2, 12, 0, 0, 0, time.UTC)
	o, err := game.BuildOptions(game.OptionsInput{TimeControl: ptr("10+5"), Undo: &game.UndoInput{Text: "unlimited"}})
	if err != nil {
		t.Fatal(err)
	}
	s, _, err := game.New(game.NewGame{GameID: "g", Options: o, Host: game.Player{ID: "h", TokenHash: "x"}, Seed: 1}, t0)
	if err != nil {
		t.Fatal(err)
	}
	records := [][]byte{storedgame.Encode(s)}
	now := t0
	step := func(st game.Step) {
		t.Helper()
		now = now.Add(time.Second)
		next, _, err := game.Reduce(s, st, now)
		if err != nil {
			t.Fatalf("ply %d: %v", s.Ply(), err)
		}
		s = next
		records = append(records, storedgame.Encode(s))
	}
	step(game.Join{Player: game.Player{ID: "j", TokenHash: "y"}})
	rng := rand.New(rand.NewPCG(3, 4))
	undone := false
	for s.Phase == game.PhasePlaying && s.Ply() < plies {
		if s.Ply() == 30 && !undone {
			undone = true
			step(game.Act{By: s.Turn(), Action: game.Action{Type: game.ActionRequestUndo, Plies: 2}})
			step(game.Act{By: s.Turn().Other(), Action: game.Action{Type: game.ActionRespondUndo, Accept: true}})
		}
		pos := s.Position()
		moves := pos.LegalMoves()
		uci := pos.UCI(moves[rng.IntN(len(moves))])
		step(game.Act{By: s.Turn(), Action: game.Action{Type: game.ActionMove, Move: game.MoveInput{UCI: uci}, RequestID: fmt.Sprintf("req-%d-%s", s.Ply(), uci)}})
	}
	return records
}

func ptr[T any](v T) *T { return &v }

// TestGameRecordsCompressed writes a game's every version and reads it
// back after each, byte for byte; the stored value is S2-compressed to
// under 40 % of the state. After a reopen, Get and GetGames read the same.
// A state that does not compress is stored as it is.
func TestGameRecordsCompressed(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "games.db")
	s, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	records := gameRecords(t, 120)
	for v, state := range records {
		rec := service.GameRecord{GameID: "g", Version: int64(v + 1), StateVersion: 2, State: state}
		if v == 0 {
			err = s.Create(ctx, rec)
		} else {
			err = s.Update(ctx, rec, int64(v))
		}
		if err != nil {
			t.Fatalf("version %d: %v", v+1, err)
		}
		got, err := s.Get(ctx, "g")
		if err != nil || !bytes.Equal(got.State, state) {
			t.Fatalf("version %d: Get = %d bytes, %v; want the %d written", v+1, len(got.State), err, len(state))
		}
	}
	last := records[len(records)-1]
	h, stored := storedState(t, s, "g")
	t.Logf("last version: %d bytes, stored in %d", len(last), stored)
	if !h.s2 || stored*10 > len(last)*4 {
		t.Errorf("a %d-byte game state stored in %d bytes (compressed: %v); want S2, under 40 %%", len(last), stored, h.s2)
	}

	opaque := make([]byte, 4096)
	rng := rand.New(rand.NewPCG(1, 1))
	for i := range opaque {
		opaque[i] = byte(rng.Uint32())
	}
	if err := s.Create(ctx, service.GameRecord{GameID: "random", Version: 1, StateVersion: 2, State: opaque}); err != nil {
		t.Fatal(err)
	}
	if h, n := storedState(t, s, "random"); h.s2 || n != len(opaque) {
		t.Errorf("random bytes stored in %d bytes (compressed: %v); want them as they are", n, h.s2)
	}

	// The size limit is on the state as it is: one that compresses to a
	// few kilobytes is still too large past MaxRecordSize.
	huge := bytes.Repeat([]byte("e2e4 "), MaxRecordSize/5+1)
	if err := s.Create(ctx, service.GameRecord{GameID: "huge", Version: 1, StateVersion: 2, State: huge}); !errors.Is(err, service.ErrTooLarge) {
		t.Errorf("Create with a compressible %d-byte state = %v; want ErrTooLarge", len(huge), err)
	}

	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if s, err = Open(path); err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	many, err := s.GetGames(ctx, []string{"g", "random"})
	if err != nil || !bytes.Equal(many["g"].State, last) || !bytes.Equal(many["random"].State, opaque) {
		t.Fatalf("after reopening, GetGames = %v; want both states as written", err)
	}
}

// storedState is the header of id's stored value and its state's size.
func storedState(t *testing.T, s *Store, id string) (header, int) {
	t.Helper()
	var h header
	var n int
	err := s.db.View(func(tx *bolt.Tx) error {
		value := tx.Bucket(gamesBucket).Get([]byte(id))
		var err error
		h, err = decodeHeader(value)
		n = len(value) - h.stateOffset
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return h, n
}

// BenchmarkUpdateGameRecords: 200 games of real records (each a version
// ahead of the last), updated in turn, one commit each; page-bytes/op is
// what bbolt allocated for the commit's dirty pages, the bytes it writes
// (with the meta page), writes/op its write calls. plain stores the states
// uncompressed, as before S2.
func BenchmarkUpdateGameRecords(b *testing.B) {
	records := gameRecords(b, 200)[20:] // the change log full from here
	for _, mode := range []string{"plain", "s2"} {
		b.Run(mode, func(b *testing.B) {
			s, err := Open(filepath.Join(b.TempDir(), "games.db"))
			if err != nil {
				b.Fatal(err)
			}
			defer s.Close()
			ctx := context.Background()
			const games = 200
			version := make([]int, games)
			write := func(g int, create bool) {
				rec := service.GameRecord{GameID: fmt.Sprintf("game-%08x", g*2654435761), Version: int64(version[g] + 1), StateVersion: 2,
					State: records[(g+version[g])%len(records)]}
				op := &writeOp{key: []byte(rec.GameID), create: create, expected: rec.Version - 1}
				op.value, _ = encodeRecord(rec, mode == "s2")
				if err := s.write(ctx, op); err != nil {
					b.Fatal(err)
				}
				version[g]++
			}
			for g := range games {
				write(g, true)
			}
			before := s.db.Stats().TxStats
			for i := 0; b.Loop(); i++ {
				write(i%games, false)
			}
			after := s.db.Stats().TxStats
			b.ReportMetric(float64(after.GetPageAlloc()-before.GetPageAlloc())/float64(b.N), "page-bytes/op")
			b.ReportMetric(float64(after.GetWrite()-before.GetWrite())/float64(b.N), "writes/op")
		})
	}
}

// BenchmarkGameRecordCodec is the CPU a game's record costs to encode and
// to decode, compressed or not, at 40 and 200 plies; zstd is the DynamoDB
// store's compression of the same state, for the comparison.
func BenchmarkGameRecordCodec(b *testing.B) {
	records := gameRecords(b, 200)
	for _, plies := range []int{40, 200} {
		rec := service.GameRecord{GameID: "g", Version: 9, StateVersion: 2, State: records[min(plies+3, len(records)-1)]}
		for _, compress := range []bool{false, true} {
			mode := map[bool]string{false: "plain", true: "s2"}[compress]
			b.Run(fmt.Sprintf("encode/%d/%s", plies, mode), func(b *testing.B) {
				for b.Loop() {
					encodeRecord(rec, compress)
				}
			})
			value, _ := encodeRecord(rec, compress)
			b.Run(fmt.Sprintf("decode/%d/%s", plies, mode), func(b *testing.B) {
				for b.Loop() {
					if _, err := decodeRecord("g", value); err != nil {
						b.Fatal(err)
					}
				}
				b.ReportMetric(float64(len(value)), "stored-bytes")
				b.ReportMetric(float64(len(rec.State)), "state-bytes")
			})
		}
		b.Run(fmt.Sprintf("encode/%d/zstd", plies), func(b *testing.B) {
			for b.Loop() {
				statezstd.Compress(rec.State)
			}
		})
		packed, _ := statezstd.Compress(rec.State)
		b.Run(fmt.Sprintf("decode/%d/zstd", plies), func(b *testing.B) {
			for b.Loop() {
				if _, err := statezstd.Decompress(packed); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(len(packed)), "stored-bytes")
		})
	}
}
