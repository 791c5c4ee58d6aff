package storetest

import (
	"errors"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"chessapi/shared/service"
)

// RunPlayers runs the conformance suite of service.Players. newPlayers is
// called once per subtest and returns a store holding none of the ids the
// suite generates.
//
// Besides the contract written on service.Players, the suite pins down:
//   - A player reads back as written with Version 1 (CreatePlayer) or the
//     written Version (UpdatePlayer), CreatedAt truncated to the
//     millisecond in UTC, an empty Applied as nil.
//   - A refused CreatePlayer leaves nothing behind: neither the player
//     nor the token resolves.
//   - Times are compared to the millisecond: a link code is expired from
//     its expiresAt (rounded up to the millisecond) on, a slot's claim is
//     stale once it is more than ttl old.
//   - ClaimSlot by the value that already holds the slot succeeds and
//     renews the claim (a retried claim must not lose to itself).
//   - Hit counts windows of different lengths apart, even when they start
//     at the same instant.
//   - Empty ids, keys and hashes are errors, never panics.
func RunPlayers(t *testing.T, newPlayers func(t *testing.T) service.Players) {
	t.Run("CreateAndRead", func(t *testing.T) { testCreateAndRead(t, newPlayers(t)) })
	t.Run("CreateTaken", func(t *testing.T) { testCreateTaken(t, newPlayers(t)) })
	t.Run("UpdateCAS", func(t *testing.T) { testUpdatePlayerCAS(t, newPlayers(t)) })
	t.Run("Tokens", func(t *testing.T) { testTokens(t, newPlayers(t)) })
	t.Run("LinkCodes", func(t *testing.T) { testLinkCodes(t, newPlayers(t)) })
	t.Run("LinkCodeSingleUse", func(t *testing.T) { testLinkCodeSingleUse(t, newPlayers(t)) })
	t.Run("HitExact", func(t *testing.T) { testHitExact(t, newPlayers(t)) })
	t.Run("HitWindows", func(t *testing.T) { testHitWindows(t, newPlayers(t)) })
	t.Run("SlotSingleWinner", func(t *testing.T) { testSlotSingleWinner(t, newPlayers(t)) })
	t.Run("SlotStaleAndRelease", func(t *testing.T) { testSlotStaleAndRelease(t, newPlayers(t)) })
	t.Run("EmptyArguments", func(t *testing.T) { testPlayersEmptyArguments(t, newPlayers(t)) })
	runAccounts(t, newPlayers)
}

func newPlayer() service.PlayerRecord {
	return service.PlayerRecord{
		ID:         newPlayerID("player"),
		Name:       "김철수 (Kim)",
		Rating:     1000,
		RatedGames: 0,
		CreatedAt:  indexEpoch.Add(987654 * time.Nanosecond).In(time.FixedZone("KST", 9*3600)),
	}
}

func newHash(kind string) string { return kind + "-hash-" + newID() }

// storedPlayer is what a read returns for a written player.
func storedPlayer(p service.PlayerRecord) service.PlayerRecord {
	if !p.CreatedAt.IsZero() {
		p.CreatedAt = p.CreatedAt.Truncate(time.Millisecond).UTC()
	}
	if len(p.Applied) == 0 {
		p.Applied = nil
	}
	return p
}

// historyEqual compares rating histories to the millisecond, in UTC.
func historyEqual(got, want []service.RatingEntry) bool {
	if len(got) != len(want) {
		return false
	}
	for i := range got {
		g, w := got[i], want[i]
		if g.GameID != w.GameID || g.Before != w.Before || g.After != w.After || !g.At.Equal(w.At.Truncate(time.Millisecond)) || g.At.Location() != time.UTC {
			return false
		}
	}
	return true
}

func playerDiff(got, want service.PlayerRecord) string {
	if got.ID != want.ID || got.Name != want.Name || got.Rating != want.Rating || got.RatedGames != want.RatedGames ||
		got.Version != want.Version || !got.CreatedAt.Equal(want.CreatedAt) || !slices.Equal(got.Applied, want.Applied) ||
		got.RecoveryHash != want.RecoveryHash || !historyEqual(got.RatingHistory, want.RatingHistory) ||
		(got.Applied == nil) != (want.Applied == nil) || (!got.CreatedAt.IsZero() && got.CreatedAt.Location() != time.UTC) {
		return fmt.Sprintf("%+v, want %+v", got, want)
	}
	return ""
}

func mustPlayer(t *testing.T, ps service.Players, want service.PlayerRecord) {
	t.Helper()
	got, err := ps.Player(ctxFor(t), want.ID)
	if err != nil {
		t.Fatalf("Player(%q) = %v", want.ID, err)
	}
	if d := playerDiff(got, storedPlayer(want)); d != "" {
		t.Fatalf("Player(%q) = %s", want.ID, d)
	}
}

func mustCreatePlayer(t *testing.T, ps service.Players, p service.PlayerRecord, tokenHash string) service.PlayerRecord {
	t.Helper()
	if err := ps.CreatePlayer(ctxFor(t), p, sessionFor(p.ID, tokenHash)); err != nil {
		t.Fatalf("CreatePlayer(%q) = %v", p.ID, err)
	}
	p.Version = 1
	return p
}

func testCreateAndRead(t *testing.T, ps service.Players) {
	p := newPlayer()
	hash := newHash("token")
	p = mustCreatePlayer(t, ps, p, hash)
	mustPlayer(t, ps, p)
	got, _, err := ps.PlayerByToken(ctxFor(t), hash)
	if err != nil || playerDiff(got, storedPlayer(p)) != "" {
		t.Fatalf("PlayerByToken = %+v, %v; want %+v", got, err, storedPlayer(p))
	}

	// Every field, and a player without a name or creation time.
	full := service.PlayerRecord{ID: newPlayerID("full"), Rating: -5, RatedGames: 31, Applied: []string{"g1", "g#2", "g3"}}
	full = mustCreatePlayer(t, ps, full, newHash("token"))
	mustPlayer(t, ps, full)

	if _, err := ps.Player(ctxFor(t), newPlayerID("nobody")); !errors.Is(err, service.ErrNotFound) {
		t.Errorf("Player(unknown) = %v; want ErrNotFound", err)
	}
	if _, _, err := ps.PlayerByToken(ctxFor(t), newHash("unknown")); !errors.Is(err, service.ErrNotFound) {
		t.Errorf("PlayerByToken(unknown) = %v; want ErrNotFound", err)
	}
	bad := newPlayer()
	bad.Version = 7
	if err := ps.CreatePlayer(ctxFor(t), bad, sessionFor(bad.ID, newHash("token"))); err == nil {
		t.Errorf("CreatePlayer with Version 7 = nil; want an error")
	}
}

func testCreateTaken(t *testing.T, ps service.Players) {
	p := mustCreatePlayer(t, ps, newPlayer(), newHash("token"))
	hash := newHash("token")
	intruder := p
	intruder.Name = "intruder"
	if err := ps.CreatePlayer(ctxFor(t), intruder, sessionFor(intruder.ID, hash)); !errors.Is(err, service.ErrAlreadyExists) {
		t.Fatalf("CreatePlayer with a taken id = %v; want ErrAlreadyExists", err)
	}
	mustPlayer(t, ps, p)
	if got, _, err := ps.PlayerByToken(ctxFor(t), hash); !errors.Is(err, service.ErrNotFound) {
		t.Fatalf("the refused player's token resolves to %+v, %v; want ErrNotFound", got, err)
	}

	taken := newHash("token")
	owner := mustCreatePlayer(t, ps, newPlayer(), taken)
	other := newPlayer()
	if err := ps.CreatePlayer(ctxFor(t), other, sessionFor(other.ID, taken)); !errors.Is(err, service.ErrAlreadyExists) {
		t.Fatalf("CreatePlayer with a taken token hash = %v; want ErrAlreadyExists", err)
	}
	if got, err := ps.Player(ctxFor(t), other.ID); !errors.Is(err, service.ErrNotFound) {
		t.Fatalf("the refused player reads as %+v, %v; want ErrNotFound (nothing half-made)", got, err)
	}
	if got, _, err := ps.PlayerByToken(ctxFor(t), taken); err != nil || got.ID != owner.ID {
		t.Fatalf("PlayerByToken(taken) = %+v, %v; want the first owner %s", got, err, owner.ID)
	}
	// The refused id is free again.
	mustCreatePlayer(t, ps, other, newHash("token"))
}

func testUpdatePlayerCAS(t *testing.T, ps service.Players) {
	p := mustCreatePlayer(t, ps, newPlayer(), newHash("token"))
	v2 := p
	v2.Version = 2
	v2.Name = "renamed"
	v2.Rating = 1040
	v2.RatedGames = 1
	v2.Applied = []string{"game-1"}
	if err := ps.UpdatePlayer(ctxFor(t), v2, 1); err != nil {
		t.Fatalf("UpdatePlayer(1) = %v", err)
	}
	mustPlayer(t, ps, v2)

	stale := v2
	stale.Version = 2
	stale.Name = "stale"
	for _, expected := range []int64{1, 3} {
		if err := ps.UpdatePlayer(ctxFor(t), stale, expected); !errors.Is(err, service.ErrVersionConflict) {
			t.Errorf("UpdatePlayer(expected %d) with stored version 2 = %v; want ErrVersionConflict", expected, err)
		}
	}
	mustPlayer(t, ps, v2)
	missing := newPlayer()
	missing.Version = 2
	if err := ps.UpdatePlayer(ctxFor(t), missing, 1); !errors.Is(err, service.ErrVersionConflict) {
		t.Errorf("UpdatePlayer of a missing player = %v; want ErrVersionConflict", err)
	}
	if _, err := ps.Player(ctxFor(t), missing.ID); !errors.Is(err, service.ErrNotFound) {
		t.Errorf("a refused update created the player: %v", err)
	}

	// Two rating changes race from version 2: one wins, the other
	// conflicts, and the stored player is the winner's.
	const racers = 2
	errs := make([]error, racers)
	start := make(chan struct{})
	var wg sync.WaitGroup
	for i := range racers {
		wg.Go(func() {
			next := v2
			next.Version = 3
			next.Rating = 1100 + i
			next.Applied = append(slices.Clone(v2.Applied), fmt.Sprintf("game-%d", 10+i))
			<-start
			errs[i] = ps.UpdatePlayer(ctxFor(t), next, 2)
		})
	}
	close(start)
	wg.Wait()
	winner := -1
	for i, err := range errs {
		switch {
		case err == nil && winner >= 0:
			t.Fatalf("both concurrent updates from version 2 won")
		case err == nil:
			winner = i
		case !errors.Is(err, service.ErrVersionConflict):
			t.Fatalf("concurrent UpdatePlayer = %v; want nil or ErrVersionConflict", err)
		}
	}
	if winner < 0 {
		t.Fatal("no concurrent update won")
	}
	want := v2
	want.Version = 3
	want.Rating = 1100 + winner
	want.Applied = []string{"game-1", fmt.Sprintf("game-%d", 10+winner)}
	mustPlayer(t, ps, want)

	// A whole replacement: an emptied Applied stays empty.
	v4 := want
	v4.Version = 4
	v4.Applied = nil
	if err := ps.UpdatePlayer(ctxFor(t), v4, 3); err != nil {
		t.Fatal(err)
	}
	mustPlayer(t, ps, v4)
}

func testTokens(t *testing.T, ps service.Players) {
	first, second := newHash("token"), newHash("token")
	p := mustCreatePlayer(t, ps, newPlayer(), first)
	if err := ps.AddSession(ctxFor(t), sessionFor(p.ID, second)); err != nil {
		t.Fatalf("AddSession = %v", err)
	}
	for _, h := range []string{first, second} {
		if got, sess, err := ps.PlayerByToken(ctxFor(t), h); err != nil || got.ID != p.ID || sess.PlayerID != p.ID || sess.TokenHash != h || sess.ID == "" {
			t.Errorf("PlayerByToken(%s) = %+v, %+v, %v; want %s with its session", h, got, sess, err, p.ID)
		}
	}
	// Both tokens see the player's updates.
	v2 := p
	v2.Version = 2
	v2.Name = "updated"
	if err := ps.UpdatePlayer(ctxFor(t), v2, 1); err != nil {
		t.Fatal(err)
	}
	if got, _, err := ps.PlayerByToken(ctxFor(t), second); err != nil || got.Name != "updated" || got.Version != 2 {
		t.Errorf("PlayerByToken after an update = %+v, %v; want version 2", got, err)
	}

	other := mustCreatePlayer(t, ps, newPlayer(), newHash("token"))
	for _, h := range []string{first, second} {
		if err := ps.AddSession(ctxFor(t), sessionFor(other.ID, h)); !errors.Is(err, service.ErrAlreadyExists) {
			t.Errorf("AddSession of a hash another player holds = %v; want ErrAlreadyExists", err)
		}
		if got, _, err := ps.PlayerByToken(ctxFor(t), h); err != nil || got.ID != p.ID {
			t.Errorf("PlayerByToken(%s) after a refused AddSession = %+v, %v; want still %s", h, got, err, p.ID)
		}
	}
	if list, err := ps.Sessions(ctxFor(t), other.ID); err != nil || len(list) != 1 {
		t.Errorf("Sessions of the refused player = %+v, %v; want its one session (refusals leave nothing)", list, err)
	}
	orphan := newHash("token")
	if err := ps.AddSession(ctxFor(t), sessionFor(newPlayerID("nobody"), orphan)); !errors.Is(err, service.ErrNotFound) {
		t.Errorf("AddSession for an unknown player = %v; want ErrNotFound", err)
	}
	if _, _, err := ps.PlayerByToken(ctxFor(t), orphan); !errors.Is(err, service.ErrNotFound) {
		t.Errorf("the refused token resolves: %v", err)
	}
}

func testLinkCodes(t *testing.T, ps service.Players) {
	p := mustCreatePlayer(t, ps, newPlayer(), newHash("token"))
	now := time.Now().Truncate(time.Millisecond) // expiry is kept to the millisecond
	code := newHash("link")
	expires := now.Add(10 * time.Minute)
	if err := ps.PutLinkCode(ctxFor(t), code, p.ID, expires); err != nil {
		t.Fatalf("PutLinkCode = %v", err)
	}
	if err := ps.PutLinkCode(ctxFor(t), code, "someone-else", expires); !errors.Is(err, service.ErrAlreadyExists) {
		t.Fatalf("PutLinkCode of a live code's hash = %v; want ErrAlreadyExists", err)
	}
	// At its expiry (and after) the code is gone; a millisecond before, it
	// works, once.
	if _, err := ps.ClaimLinkCode(ctxFor(t), code, expires); !errors.Is(err, service.ErrNotFound) {
		t.Errorf("ClaimLinkCode at expiresAt = %v; want ErrNotFound", err)
	}
	if _, err := ps.ClaimLinkCode(ctxFor(t), code, expires.Add(time.Hour)); !errors.Is(err, service.ErrNotFound) {
		t.Errorf("ClaimLinkCode after expiresAt = %v; want ErrNotFound", err)
	}
	got, err := ps.ClaimLinkCode(ctxFor(t), code, expires.Add(-time.Millisecond))
	if err != nil || got != p.ID {
		t.Fatalf("ClaimLinkCode before expiry = %q, %v; want %q", got, err, p.ID)
	}
	if _, err := ps.ClaimLinkCode(ctxFor(t), code, now); !errors.Is(err, service.ErrNotFound) {
		t.Errorf("second ClaimLinkCode = %v; want ErrNotFound (single use)", err)
	}
	if _, err := ps.ClaimLinkCode(ctxFor(t), newHash("link"), now); !errors.Is(err, service.ErrNotFound) {
		t.Errorf("ClaimLinkCode(unknown) = %v; want ErrNotFound", err)
	}

	// A used hash, and one held by an expired code, can be put again.
	if err := ps.PutLinkCode(ctxFor(t), code, p.ID, time.Now().Add(time.Minute)); err != nil {
		t.Errorf("PutLinkCode of a used code's hash = %v; want nil", err)
	}
	old := newHash("link")
	if err := ps.PutLinkCode(ctxFor(t), old, p.ID, time.Now().Add(-time.Second)); err != nil {
		t.Fatalf("PutLinkCode(already expired) = %v", err)
	}
	if err := ps.PutLinkCode(ctxFor(t), old, p.ID, time.Now().Add(time.Minute)); err != nil {
		t.Errorf("PutLinkCode over an expired code = %v; want nil", err)
	}
	if got, err := ps.ClaimLinkCode(ctxFor(t), old, time.Now()); err != nil || got != p.ID {
		t.Errorf("ClaimLinkCode of the renewed code = %q, %v; want %q", got, err, p.ID)
	}
}

func testLinkCodeSingleUse(t *testing.T, ps service.Players) {
	const claimers = 20
	p := mustCreatePlayer(t, ps, newPlayer(), newHash("token"))
	for round := range 3 {
		code := newHash("link")
		if err := ps.PutLinkCode(ctxFor(t), code, p.ID, time.Now().Add(10*time.Minute)); err != nil {
			t.Fatal(err)
		}
		results := make([]string, claimers)
		errs := make([]error, claimers)
		start := make(chan struct{})
		var wg sync.WaitGroup
		for i := range claimers {
			wg.Go(func() {
				<-start
				results[i], errs[i] = ps.ClaimLinkCode(ctxFor(t), code, time.Now())
			})
		}
		close(start)
		wg.Wait()
		wins := 0
		for i, err := range errs {
			switch {
			case err == nil:
				wins++
				if results[i] != p.ID {
					t.Errorf("round %d: a claim returned %q; want %q", round, results[i], p.ID)
				}
			case !errors.Is(err, service.ErrNotFound):
				t.Errorf("round %d: ClaimLinkCode = %v; want nil or ErrNotFound", round, err)
			}
		}
		if wins != 1 {
			t.Fatalf("round %d: %d of %d concurrent claims of one code succeeded; want exactly 1", round, wins, claimers)
		}
	}
}

func testHitExact(t *testing.T, ps service.Players) {
	const hits = 50
	key := "hits-" + newID()
	window := time.Hour
	now := time.Now()
	counts := make([]int64, hits)
	ends := make([]time.Time, hits)
	errs := make([]error, hits)
	start := make(chan struct{})
	var wg sync.WaitGroup
	for i := range hits {
		wg.Go(func() {
			<-start
			counts[i], ends[i], errs[i] = ps.Hit(ctxFor(t), key, window, now)
		})
	}
	close(start)
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			t.Fatalf("Hit = %v", err)
		}
	}
	slices.Sort(counts)
	for i, c := range counts {
		if c != int64(i+1) {
			t.Fatalf("the %d concurrent hits returned counts %v; want each of 1..%d once", hits, counts, hits)
		}
	}
	wantEnd := now.Truncate(window).Add(window)
	for _, end := range ends {
		if !end.Equal(wantEnd) {
			t.Fatalf("Hit window end = %v; want %v", end, wantEnd)
		}
	}
	got, end, err := ps.Count(ctxFor(t), key, window, now)
	if err != nil || got != hits || !end.Equal(wantEnd) {
		t.Errorf("Count = %d, %v, %v; want %d, %v", got, end, err, hits, wantEnd)
	}
}

func testHitWindows(t *testing.T, ps service.Players) {
	key := "window-" + newID()
	minute := time.Minute
	// A window boundary: windows start at multiples of their length.
	boundary := time.Date(2026, 5, 1, 12, 34, 0, 0, time.UTC)
	hit := func(key string, window time.Duration, at time.Time) (int64, time.Time) {
		t.Helper()
		c, end, err := ps.Hit(ctxFor(t), key, window, at)
		if err != nil {
			t.Fatalf("Hit(%s, %v, %v) = %v", key, window, at, err)
		}
		return c, end
	}
	if c, end := hit(key, minute, boundary.Add(-time.Nanosecond)); c != 1 || !end.Equal(boundary) {
		t.Errorf("last instant of a window: count %d, end %v; want 1, %v", c, end, boundary)
	}
	if c, end := hit(key, minute, boundary.Add(-30*time.Second)); c != 2 || !end.Equal(boundary) {
		t.Errorf("same window: count %d, end %v; want 2, %v", c, end, boundary)
	}
	if c, end := hit(key, minute, boundary); c != 1 || !end.Equal(boundary.Add(minute)) {
		t.Errorf("first instant of the next window: count %d, end %v; want 1, %v", c, end, boundary.Add(minute))
	}
	// Windows of other lengths starting at the same instant, and other
	// keys, count apart.
	hour := boundary.Add(26 * time.Minute) // 13:00, where an hour and a minute window start
	if c, end := hit(key, time.Hour, hour); c != 1 || !end.Equal(hour.Add(time.Hour)) {
		t.Errorf("an hour window: count %d, end %v; want 1, %v", c, end, hour.Add(time.Hour))
	}
	if c, end := hit(key, minute, hour); c != 1 || !end.Equal(hour.Add(minute)) {
		t.Errorf("the minute window starting with the hour window: count %d, end %v; want 1, %v", c, end, hour.Add(minute))
	}
	if c, _ := hit(key, time.Second, boundary); c != 1 {
		t.Errorf("a second window starting with a minute window: count %d; want 1", c)
	}
	if c, _ := hit(key+"#60000000000", minute, boundary); c != 1 {
		t.Errorf("a key that ends like a window: count %d; want 1", c)
	}
	if c, end, err := ps.Count(ctxFor(t), "never-"+newID(), minute, boundary); err != nil || c != 0 || !end.Equal(boundary.Add(minute)) {
		t.Errorf("Count of an unused key = %d, %v, %v; want 0, %v", c, end, err, boundary.Add(minute))
	}
	if c, _, err := ps.Count(ctxFor(t), key, minute, boundary.Add(-time.Second)); err != nil || c != 2 {
		t.Errorf("Count of the first window = %d, %v; want 2", c, err)
	}
	for _, window := range []time.Duration{0, -time.Second} {
		if _, _, err := ps.Hit(ctxFor(t), key, window, boundary); err == nil {
			t.Errorf("Hit with window %v = nil error; want an error", window)
		}
	}
}

func testSlotSingleWinner(t *testing.T, ps service.Players) {
	const claimers = 20
	key := "slot-" + newID()
	now := time.Now()
	holders := make([]string, claimers)
	errs := make([]error, claimers)
	start := make(chan struct{})
	var wg sync.WaitGroup
	for i := range claimers {
		wg.Go(func() {
			<-start
			holders[i], errs[i] = ps.ClaimSlot(ctxFor(t), key, fmt.Sprintf("claimer-%d", i), time.Minute, now)
		})
	}
	close(start)
	wg.Wait()
	winner := ""
	for i, err := range errs {
		if err == nil {
			if winner != "" {
				t.Fatalf("%s and claimer-%d both claimed the free slot", winner, i)
			}
			winner = fmt.Sprintf("claimer-%d", i)
			if holders[i] != winner {
				t.Errorf("the winner's ClaimSlot returned holder %q; want itself", holders[i])
			}
		} else if !errors.Is(err, service.ErrSlotTaken) {
			t.Fatalf("ClaimSlot = %v; want nil or ErrSlotTaken", err)
		}
	}
	if winner == "" {
		t.Fatal("no concurrent claim of a free slot succeeded")
	}
	for i, err := range errs {
		if err != nil && holders[i] != winner {
			t.Errorf("a losing claim names holder %q; want %q", holders[i], winner)
		}
	}
	// The holder claiming again renews its claim.
	if h, err := ps.ClaimSlot(ctxFor(t), key, winner, time.Minute, now.Add(time.Second)); err != nil || h != winner {
		t.Errorf("the holder's second ClaimSlot = %q, %v; want %q, nil", h, err, winner)
	}
}

func testSlotStaleAndRelease(t *testing.T, ps service.Players) {
	key := "slot-" + newID()
	ttl := 30 * time.Second
	t0 := time.Now()
	claim := func(value string, at time.Time) (string, error) {
		t.Helper()
		return ps.ClaimSlot(ctxFor(t), key, value, ttl, at)
	}
	if h, err := claim("a", t0); err != nil || h != "a" {
		t.Fatalf("ClaimSlot(free) = %q, %v", h, err)
	}
	// Exactly ttl old is not older than ttl.
	if h, err := claim("b", t0.Add(ttl)); !errors.Is(err, service.ErrSlotTaken) || h != "a" {
		t.Fatalf("ClaimSlot at exactly ttl = %q, %v; want a, ErrSlotTaken", h, err)
	}
	if h, err := claim("b", t0.Add(ttl+time.Millisecond)); err != nil || h != "b" {
		t.Fatalf("ClaimSlot of a stale slot = %q, %v; want b, nil", h, err)
	}
	// The former holder lost it: its release changes nothing.
	if err := ps.ReleaseSlot(ctxFor(t), key, "a"); err != nil {
		t.Fatalf("ReleaseSlot by a former holder = %v; want nil", err)
	}
	if h, err := claim("c", t0.Add(ttl+2*time.Millisecond)); !errors.Is(err, service.ErrSlotTaken) || h != "b" {
		t.Fatalf("ClaimSlot after a non-holder's release = %q, %v; want b, ErrSlotTaken", h, err)
	}
	if err := ps.ReleaseSlot(ctxFor(t), key, "b"); err != nil {
		t.Fatalf("ReleaseSlot by the holder = %v", err)
	}
	if h, err := claim("c", t0.Add(ttl+3*time.Millisecond)); err != nil || h != "c" {
		t.Fatalf("ClaimSlot after the holder's release = %q, %v; want c, nil", h, err)
	}
	if err := ps.ReleaseSlot(ctxFor(t), "slot-never-"+newID(), "x"); err != nil {
		t.Errorf("ReleaseSlot of a free slot = %v; want nil", err)
	}
}

func testPlayersEmptyArguments(t *testing.T, ps service.Players) {
	ctx := ctxFor(t)
	now := time.Now()
	p := newPlayer()
	p.ID = ""
	checks := map[string]error{
		"CreatePlayer(empty id)":   ps.CreatePlayer(ctx, p, sessionFor(p.ID, newHash("token"))),
		"CreatePlayer(empty hash)": func() error { q := newPlayer(); return ps.CreatePlayer(ctx, q, sessionFor(q.ID, "")) }(),
		"UpdatePlayer(empty id)":   ps.UpdatePlayer(ctx, service.PlayerRecord{Version: 2}, 1),
		"AddSession(empty hash)":   ps.AddSession(ctx, sessionFor("someone", "")),
		"PutLinkCode(empty hash)":  ps.PutLinkCode(ctx, "", "someone", now.Add(time.Minute)),
		"ReleaseSlot(empty key)":   ps.ReleaseSlot(ctx, "", "v"),
	}
	_, checks["Player(empty)"] = ps.Player(ctx, "")
	_, _, checks["PlayerByToken(empty)"] = ps.PlayerByToken(ctx, "")
	_, checks["ClaimLinkCode(empty)"] = ps.ClaimLinkCode(ctx, "", now)
	_, _, checks["Hit(empty key)"] = ps.Hit(ctx, "", time.Minute, now)
	_, checks["ClaimSlot(empty value)"] = ps.ClaimSlot(ctx, "k", "", time.Minute, now)
	for name, err := range checks {
		if err == nil || errors.Is(err, service.ErrNotFound) {
			t.Errorf("%s = %v; want a validation error", name, err)
		}
	}
}
