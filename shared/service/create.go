package service

import (
	"context"
	"encoding/json"
	"errors"
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"

	"chessapi/shared/game"
)

// PlayerInput names who takes a seat; both fields are optional.
type PlayerInput struct {
	ID   string
	Name string
}

// CreateInput is a request to create a game.
type CreateInput struct {
	// Options is the raw options object (nil for all defaults).
	Options json.RawMessage
	// AILevel is the level of an AI opponent, or "" for a human opponent.
	AILevel string
	Player  PlayerInput
	// RematchOf is the id of a finished game this one is a rematch of.
	RematchOf string
}

// Seated is the answer to create and join: the new seat's player id and
// secret token (shown only here), and the game as that seat sees it.
type Seated struct {
	GameID   string
	PlayerID string
	Token    string
	Game     *game.View
}

const maxNameRunes = 40

// checkPlayer validates and completes a PlayerInput.
func (s *Service) checkPlayer(in PlayerInput) (PlayerInput, error) {
	if in.ID == "" {
		id, err := s.newPlayerID()
		if err != nil {
			return in, err
		}
		in.ID = id
	} else if len(in.ID) > 64 || !printable(in.ID) {
		return in, &game.InputError{Field: "player.id", Message: "player.id는 64자 이하의 일반 문자여야 해요"}
	}
	in.Name = strings.TrimSpace(in.Name)
	if utf8.RuneCountInString(in.Name) > maxNameRunes || !printable(in.Name) {
		return in, &game.InputError{Field: "player.name", Message: "이름은 40자 이하의 일반 문자여야 해요"}
	}
	return in, nil
}

func printable(s string) bool {
	if !utf8.ValidString(s) {
		return false
	}
	for _, r := range s {
		if !unicode.IsPrint(r) {
			return false
		}
	}
	return true
}

// Create makes a new game with the caller in the host seat.
func (s *Service) Create(ctx context.Context, in CreateInput) (Seated, error) {
	opts, err := game.ParseOptions(in.Options)
	if err != nil {
		return Seated{}, err
	}
	if in.AILevel != "" && !slices.Contains(game.AILevels, in.AILevel) {
		return Seated{}, &game.InputError{Field: "opponent.level", Message: `level은 "easy", "normal", "hard", "max" 중 하나여야 해요`}
	}
	player, err := s.checkPlayer(in.Player)
	if err != nil {
		return Seated{}, err
	}
	var previous *game.PreviousGame
	if in.RematchOf != "" {
		if previous, err = s.previousGame(ctx, in.RematchOf, player.ID); err != nil {
			return Seated{}, err
		}
	}
	token, hash, err := s.newToken()
	if err != nil {
		return Seated{}, err
	}
	seed, err := s.newSeed()
	if err != nil {
		return Seated{}, err
	}
	now := s.cfg.Now()
	var st *game.State
	for attempt := 0; ; attempt++ {
		id, err := s.newGameID()
		if err != nil {
			return Seated{}, err
		}
		st, _, err = game.New(game.NewGame{
			GameID:    id,
			Options:   opts,
			Host:      game.Player{ID: player.ID, Name: player.Name, TokenHash: hash},
			AI:        in.AILevel,
			Seed:      seed,
			RematchOf: previous,
		}, now)
		if err != nil {
			return Seated{}, err
		}
		rec, err := s.record(st)
		if err != nil {
			return Seated{}, err
		}
		err = s.cfg.Store.Create(ctx, rec)
		if err == nil {
			s.afterWrite(ctx, st, rec)
			break
		}
		// A 128-bit id collision is practically impossible; retry once anyway.
		if !errors.Is(err, ErrAlreadyExists) || attempt > 0 {
			return Seated{}, err
		}
	}
	if previous != nil {
		s.linkRematch(ctx, previous.GameID, st.GameID)
	}
	color, _ := st.SeatOf(player.ID)
	view, err := game.ViewOf(st, &color, now)
	if err != nil {
		return Seated{}, err
	}
	return Seated{GameID: st.GameID, PlayerID: player.ID, Token: token, Game: view}, nil
}

// previousGame finds the caller's colour in the game a rematch follows.
func (s *Service) previousGame(ctx context.Context, id, playerID string) (*game.PreviousGame, error) {
	prev, err := s.load(ctx, id)
	if errors.Is(err, ErrNotFound) {
		return nil, &game.InputError{Field: "rematchOf", Message: "재대국할 원래 대국을 찾을 수 없어요"}
	}
	if err != nil {
		return nil, err
	}
	color, ok := prev.state.SeatOf(playerID)
	if !ok {
		return nil, &game.InputError{Field: "rematchOf", Message: "원래 대국의 참가자만 재대국을 만들 수 있어요 (player.id)"}
	}
	return &game.PreviousGame{GameID: id, HostColor: color}, nil
}

// linkRematch records the new game on the previous one, best effort: the
// link is a convenience for clients, the new game stands without it.
func (s *Service) linkRematch(ctx context.Context, prevID, nextID string) {
	for attempt := 0; attempt < s.cfg.MaxAttempts; attempt++ {
		prev, err := s.load(ctx, prevID)
		if err != nil {
			s.log.Warn("rematch link: load", "game", prevID, "err", err)
			return
		}
		next, _, err := game.LinkRematch(prev.state, nextID)
		if err != nil {
			return // already linked, or not finished: nothing to record
		}
		err = s.write(ctx, prev, next)
		if !errors.Is(err, ErrVersionConflict) {
			if err != nil {
				s.log.Warn("rematch link: write", "game", prevID, "err", err)
			}
			return
		}
	}
}

// Join seats the caller in the free seat of a waiting game.
func (s *Service) Join(ctx context.Context, gameID string, in PlayerInput) (Seated, error) {
	player, err := s.checkPlayer(in)
	if err != nil {
		return Seated{}, err
	}
	token, hash, err := s.newToken()
	if err != nil {
		return Seated{}, err
	}
	for attempt := 0; attempt < s.cfg.MaxAttempts; attempt++ {
		cur, err := s.load(ctx, gameID)
		if err != nil {
			return Seated{}, err
		}
		now := s.cfg.Now()
		next, _, err := game.Join(cur.state, game.Player{ID: player.ID, Name: player.Name, TokenHash: hash}, now)
		if err != nil {
			return Seated{}, err
		}
		err = s.write(ctx, cur, next)
		if errors.Is(err, ErrVersionConflict) {
			continue
		}
		if err != nil {
			return Seated{}, err
		}
		color, _ := next.SeatOf(player.ID)
		view, err := game.ViewOf(next, &color, now)
		if err != nil {
			return Seated{}, err
		}
		return Seated{GameID: gameID, PlayerID: player.ID, Token: token, Game: view}, nil
	}
	return Seated{}, ErrBusy
}
