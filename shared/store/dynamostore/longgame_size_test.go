package dynamostore

import (
	"bufio"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"flag"
	"fmt"
	"math/rand/v2"
	"os"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"chessapi/internal/fakeclock"
	"chessapi/shared/chess"
	"chessapi/shared/game"
	"chessapi/shared/game/storedgame"
	"chessapi/shared/service"
)

// The stored size of a long game, from a realistic fixture (issue 15): the
// README and docs quote these figures. testdata/longgame.txt is a 1,000-ply
// human game written by engine self-play (so every move is one a player
// could make, not a shuffle that compresses to nothing), with think times,
// draw offers, take-back requests and disconnections along the way. The
// test replays it through the real service, sending every action with its
// own random request id and request fingerprint as a client would, and
// measures the record the service hands its store at 200 and 1,000 plies:
// storedgame.Encode's stored form and the DynamoDB item this package writes
// (zstd past 1 KB), counted as DynamoDB counts it.
//
//	go test ./shared/store/dynamostore -run 'TestLongGameItemSize' -v
//	go test ./shared/store/dynamostore -run '^$' -bench 'BenchmarkLongGameItem' -benchtime 200x
//
// Regenerate the fixture (only when the rules change what is legal):
//
//	go test ./shared/store/dynamostore -run TestLongGameItemSize -regenerate-longgame

var regenerateLongGame = flag.Bool("regenerate-longgame", false, "rewrite testdata/longgame.txt by engine self-play")

const (
	longGameFixture = "testdata/longgame.txt"
	longGamePlies   = 1000
	// longGameItemBudget is the margin asserted under DynamoDB's item
	// limit: a 1,000-ply game must take at most a quarter of it.
	longGameItemBudget = MaxItemSize / 4
)

// longGameOptions are the defaults of a game created without options
// (10+5 Fischer, automatic threefold and 50-move draws, one take-back),
// with the host playing White so the fixture's seats are fixed.
func longGameOptions() game.Options {
	o := game.DefaultOptions()
	o.ColorAssignment = game.ColorsHostWhite
	return o
}

// scriptLine is one client action of the fixture: who, how long after the
// previous action, what.
type scriptLine struct {
	seat  chess.Color
	delay time.Duration
	verb  string // move, offerDraw, respondDraw, cancelOffer, requestUndo, respondUndo, disconnect, connect
	arg   string // the move's UCI, or accept/decline
}

func (l scriptLine) String() string {
	s := fmt.Sprintf("%c %d %s", "wb"[l.seat], l.delay.Milliseconds(), l.verb)
	if l.arg != "" {
		s += " " + l.arg
	}
	return s
}

func parseScript(t testing.TB, path string) []scriptLine {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatalf("fixture: %v (regenerate with -regenerate-longgame)", err)
	}
	defer f.Close()
	var lines []scriptLine
	sc := bufio.NewScanner(f)
	for n := 1; sc.Scan(); n++ {
		text := sc.Text()
		if text == "" || strings.HasPrefix(text, "#") {
			continue
		}
		fields := strings.Fields(text)
		if len(fields) < 3 || len(fields) > 4 || len(fields[0]) != 1 || !strings.Contains("wb", fields[0]) {
			t.Fatalf("%s:%d: %q is not <w|b> <delay ms> <action> [arg]", path, n, text)
		}
		ms, err := strconv.ParseInt(fields[1], 10, 64)
		if err != nil || ms < 0 {
			t.Fatalf("%s:%d: delay %q is not a count of milliseconds", path, n, fields[1])
		}
		l := scriptLine{seat: chess.White, delay: time.Duration(ms) * time.Millisecond, verb: fields[2]}
		if fields[0] == "b" {
			l.seat = chess.Black
		}
		if len(fields) == 4 {
			l.arg = fields[3]
		}
		lines = append(lines, l)
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return lines
}

// sizeStore is the service's store for the replay: records in memory,
// refused past DynamoDB's item limit as Store refuses them (ErrTooLarge,
// counted the same way), so the replay writes exactly what a DynamoDB-backed
// service would. Writing a thousand versions to a real table only adds the
// network; the item bytes are this package's own encodeItem either way.
type sizeStore struct {
	mu   sync.Mutex
	recs map[string]service.GameRecord
}

func (s *sizeStore) Create(_ context.Context, rec service.GameRecord) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, taken := s.recs[rec.GameID]; taken {
		return service.ErrAlreadyExists
	}
	return s.putLocked(rec)
}

func (s *sizeStore) Get(_ context.Context, id string) (service.GameRecord, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	rec, ok := s.recs[id]
	if !ok {
		return service.GameRecord{}, service.ErrNotFound
	}
	return rec, nil
}

func (s *sizeStore) Update(_ context.Context, rec service.GameRecord, expected int64) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if cur, ok := s.recs[rec.GameID]; !ok || cur.Version != expected {
		return service.ErrVersionConflict
	}
	return s.putLocked(rec)
}

func (s *sizeStore) putLocked(rec service.GameRecord) error {
	if size := itemSize(encodeItem(rec)); size > MaxItemSize {
		return fmt.Errorf("item of %d bytes: %w", size, service.ErrTooLarge)
	}
	rec.State = append([]byte(nil), rec.State...)
	s.recs[rec.GameID] = rec
	return nil
}

// replay drives the real service through a game as two clients would.
type replay struct {
	t      testing.TB
	svc    *service.Service
	store  *sizeStore
	clock  *fakeclock.Clock
	gameID string
	seats  game.PerColor[service.Caller]
	// ids draws the request ids: random UUIDs, as browsers send, seeded so
	// the figures are the same on every run.
	ids *rand.ChaCha8
}

func newReplay(t testing.TB) *replay {
	t.Helper()
	clock := fakeclock.New(time.Date(2026, 11, 29, 12, 0, 0, 0, time.UTC))
	store := &sizeStore{recs: map[string]service.GameRecord{}}
	svc, err := service.New(service.Config{
		Store: store, Now: clock.Now,
		// Game ids, player ids and tokens as random as in production, but
		// the same on every run.
		Random: rand.NewChaCha8([32]byte{'l', 'o', 'n', 'g', 'g', 'a', 'm', 'e'}),
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { svc.Close(time.Second) })
	ctx := context.Background()
	host, err := svc.Create(ctx, service.CreateInput{Options: longGameOptions(), Player: service.PlayerInput{Name: "Kim Minjun"}})
	if err != nil {
		t.Fatal(err)
	}
	clock.Advance(14 * time.Second)
	guest, err := svc.Join(ctx, host.GameID, service.JoinInput{Player: service.PlayerInput{Name: "Lee Seoyeon"}})
	if err != nil {
		t.Fatal(err)
	}
	r := &replay{t: t, svc: svc, store: store, clock: clock, gameID: host.GameID, ids: rand.NewChaCha8([32]byte{'r', 'e', 'q'})}
	r.seats[chess.White] = service.Caller{Token: host.Token}
	r.seats[chess.Black] = service.Caller{Token: guest.Token}
	return r
}

// requestID is a random version-4 UUID.
func (r *replay) requestID() string {
	var b [16]byte
	_, _ = r.ids.Read(b[:])
	b[6] = b[6]&0x0f | 0x40
	b[8] = b[8]&0x3f | 0x80
	h := hex.EncodeToString(b[:])
	return h[0:8] + "-" + h[8:12] + "-" + h[12:16] + "-" + h[16:20] + "-" + h[20:32]
}

// apply sends one scripted action after its delay and returns the game's
// ply count after it (from the view the service answered with).
func (r *replay) apply(l scriptLine) (int, error) {
	r.clock.Advance(l.delay)
	ctx := context.Background()
	caller := r.seats[l.seat]
	switch l.verb {
	case "disconnect", "connect":
		view, err := r.svc.SetPresence(ctx, r.gameID, caller, l.verb == "connect")
		if err != nil {
			return 0, err
		}
		return len(view.Moves), nil
	}
	var a game.Action
	switch l.verb {
	case "move":
		a = game.Action{Type: game.ActionMove, Move: game.MoveInput{UCI: l.arg}}
	case "offerDraw":
		a = game.Action{Type: game.ActionOfferDraw}
	case "cancelOffer":
		a = game.Action{Type: game.ActionCancelOffer}
	case "requestUndo":
		a = game.Action{Type: game.ActionRequestUndo}
	case "respondDraw", "respondUndo":
		if l.arg != "accept" && l.arg != "decline" {
			return 0, fmt.Errorf("%s: answer %q is not accept or decline", l.verb, l.arg)
		}
		a = game.Action{Type: game.ActionRespondDraw, Accept: l.arg == "accept"}
		if l.verb == "respondUndo" {
			a.Type = game.ActionRespondUndo
		}
	default:
		return 0, fmt.Errorf("unknown action %q", l.verb)
	}
	// The fingerprint the HTTP edge attaches: 16 hex digits of a SHA-256
	// of the action (shared/api requestHash).
	sum := sha256.Sum256(fmt.Appendf(nil, "%s|%s|%d|%t|%d", a.Type, a.Move, a.Castle, a.Accept, a.Plies))
	out, err := r.svc.Act(ctx, r.gameID, caller, service.ActionInput{Action: a, RequestID: r.requestID(), RequestHash: hex.EncodeToString(sum[:8])})
	if err != nil {
		return 0, err
	}
	return len(out.Game.Moves), nil
}

func (r *replay) record() service.GameRecord {
	rec, _ := r.store.Get(context.Background(), r.gameID)
	return rec
}

// longGameReplay is the outcome of replaying the fixture: the stored
// record when the game first reached 200 and 1,000 plies, and how many
// actions of each kind were sent. The replay runs once per test binary
// (the tests and the benchmark share it).
type longGameReplay struct {
	recs map[int]service.GameRecord
	sent map[string]int
}

var (
	longGameMu     sync.Mutex
	longGameResult *longGameReplay
)

func longGameRecords(t testing.TB) *longGameReplay {
	t.Helper()
	longGameMu.Lock()
	defer longGameMu.Unlock()
	if longGameResult != nil {
		return longGameResult
	}
	if *regenerateLongGame {
		generateLongGame(t)
	}
	script := parseScript(t, longGameFixture)
	r := newReplay(t)
	out := &longGameReplay{recs: map[int]service.GameRecord{}, sent: map[string]int{}}
	for i, l := range script {
		plies, err := r.apply(l)
		if err != nil {
			t.Fatalf("%s line %d (%s): %v", longGameFixture, i+1, l, err)
		}
		out.sent[l.verb]++
		if _, done := out.recs[plies]; !done && (plies == 200 || plies == longGamePlies) {
			out.recs[plies] = r.record()
		}
	}
	for _, want := range []int{200, longGamePlies} {
		if _, ok := out.recs[want]; !ok {
			t.Fatalf("the fixture never reached %d plies", want)
		}
	}
	longGameResult = out
	return out
}

// TestLongGameItemSize replays the fixture and checks the record: it is
// the game the script played (still playing after 1,000 plies, every
// action's request id distinct and logged), it decodes back from the item,
// and the item stays far below DynamoDB's 400 KB limit. It logs the
// figures the README quotes.
func TestLongGameItemSize(t *testing.T) {
	replayed := longGameRecords(t)
	recs, sent := replayed.recs, replayed.sent
	// The fixture is realistic only if the clients did more than move.
	for verb, least := range map[string]int{"move": longGamePlies, "offerDraw": 5, "respondDraw": 5, "requestUndo": 5, "respondUndo": 5, "disconnect": 5, "connect": 5} {
		if sent[verb] < least {
			t.Errorf("fixture sends %d %s actions; want at least %d", sent[verb], verb, least)
		}
	}
	sizes := map[int]int{}
	for _, plies := range []int{200, longGamePlies} {
		rec := recs[plies]
		item := encodeItem(rec)
		size := itemSize(item)
		back, err := decodeItem(item)
		if err != nil {
			t.Fatalf("%d plies: the item does not decode: %v", plies, err)
		}
		st, err := storedgame.Decode(back.State)
		if err != nil {
			t.Fatalf("%d plies: the stored state does not decode: %v", plies, err)
		}
		if len(st.Moves) != plies || st.Phase != game.PhasePlaying {
			t.Fatalf("%d plies: decoded game has %d plies in phase %s; want %d, playing", plies, len(st.Moves), st.Phase, plies)
		}
		ids := map[string]bool{}
		for _, log := range st.Requests {
			for _, r := range log {
				if ids[r.ID] {
					t.Errorf("%d plies: request id %s logged twice", plies, r.ID)
				}
				ids[r.ID] = true
			}
		}
		if len(ids) != 2*game.RequestLogSize {
			t.Errorf("%d plies: %d distinct request ids logged; want both seats' full logs (%d)", plies, len(ids), 2*game.RequestLogSize)
		}
		if _, compressed := item[attrEncoding]; !compressed {
			t.Errorf("%d plies: item not compressed (state %d bytes)", plies, len(rec.State))
		}
		if size > longGameItemBudget {
			t.Errorf("%d plies: item is %d bytes; want ≤ %d (a quarter of DynamoDB's %d)", plies, size, longGameItemBudget, MaxItemSize)
		}
		sizes[plies] = size
		t.Logf("%5d plies: storedgame.Encode %6d bytes; DynamoDB item %6d bytes (state attribute %6d bytes, %.1f%% of the 400 KB limit)",
			plies, len(rec.State), size, len(item[attrState].(*types.AttributeValueMemberB).Value), 100*float64(size)/MaxItemSize)
	}
	// Past 200 plies the request and change logs are full (they keep the
	// last 32 requests per seat and 64 changes): a ply adds only its move,
	// time and SAN. So the item of an N-ply game is about the 200-ply item
	// plus perPly bytes per further ply, and even the longest legal game
	// (8,848.5 moves, 17,697 plies, under the 75-move rule) fits.
	const maxPerPly, longestGame = 12, 17_697
	perPly := float64(sizes[longGamePlies]-sizes[200]) / float64(longGamePlies-200)
	if perPly > maxPerPly {
		t.Errorf("the item grows by %.1f bytes per ply past 200 plies; want ≤ %d (are the logs still bounded?)", perPly, maxPerPly)
	}
	longest := sizes[200] + int(perPly*(longestGame-200))
	if longest > MaxItemSize {
		t.Errorf("a %d-ply game would make an item of about %d bytes, over DynamoDB's %d", longestGame, longest, MaxItemSize)
	}
	t.Logf("growth past 200 plies: %.1f bytes per ply; the longest legal game (%d plies) would be about %d bytes", perPly, longestGame, longest)
}

// BenchmarkLongGameItem reports the sizes with the cost of building the
// item (zstd compression included) on every write of such a game.
func BenchmarkLongGameItem(b *testing.B) {
	recs := longGameRecords(b).recs
	for _, plies := range []int{200, longGamePlies} {
		rec := recs[plies]
		b.Run(fmt.Sprintf("plies=%d", plies), func(b *testing.B) {
			var item map[string]types.AttributeValue
			for b.Loop() {
				item = encodeItem(rec)
			}
			b.ReportMetric(float64(len(rec.State)), "encoded-bytes")
			b.ReportMetric(float64(itemSize(item)), "item-bytes")
		})
	}
}

// LongGameRecord is the fixture game's record at 1,000 plies, for the
// emulator test (package dynamostore_test).
func LongGameRecord(t testing.TB) service.GameRecord { return longGameRecords(t).recs[longGamePlies] }
