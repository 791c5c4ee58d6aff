// Package boltstore keeps games in an embedded bbolt file: the local
// server's default store, with the semantics of the DynamoDB store
// (conditional create and update, the same size limit, the same time
// rounding) and no server to install.
//
// Every write is committed with fsync before the call returns, so an
// acknowledged write survives a crash or SIGKILL of the process. Writes
// arriving together share one transaction (group commit); inside it they
// are applied one after another, so each version check and its write are
// atomic. Only one process may open the file.
package boltstore

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"sync"
	"time"

	bolt "go.etcd.io/bbolt"
	bolterrors "go.etcd.io/bbolt/errors"

	"chessapi/shared/service"
	"chessapi/shared/store/internal/rules"
)

// MaxRecordSize is the largest stored record, key included, in bytes. It
// equals DynamoDB's item limit so a game that grows too large fails locally
// the way it would in AWS (the two counts differ by a few dozen bytes of
// attribute names).
const MaxRecordSize = 400 * 1024

// maxKeySize is DynamoDB's limit for a partition key; bbolt's own is larger.
const maxKeySize = 2048

var gamesBucket = []byte("games")

const (
	// lockTimeout is how long Open waits for another process to release the
	// file before giving up with a clear error.
	lockTimeout = 2 * time.Second
	// initialMmapSize is reserved address space, not memory: with it the
	// file can grow this far without remapping, which would make writers
	// wait for all readers.
	initialMmapSize = 256 << 20
)

// Store is a service.Store on one bbolt file.
type Store struct {
	db *bolt.DB

	// Writes go through one goroutine that commits everything queued
	// meanwhile in one transaction (group commit): bbolt runs one writer
	// at a time and every commit costs an fsync, so committing writes one
	// by one would cap the store at a few hundred writes a second.
	ops       chan *writeOp
	closing   chan struct{}
	writerEnd chan struct{}
	closeOnce sync.Once
	closeErr  error
}

var _ service.Store = (*Store)(nil)

// maxGroup bounds how many writes share one commit, so one transaction's
// dirty pages stay small.
const maxGroup = 256

// errClosed is returned by writes after Close.
var errClosed = errors.New("store closed")

// Open opens (or creates) the database file at path, creating its
// directory. Close it when done.
func Open(path string) (*Store, error) {
	if path == "" {
		return nil, errors.New("boltstore: empty database path")
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return nil, fmt.Errorf("boltstore: create directory for %s: %w", path, err)
	}
	db, err := bolt.Open(path, 0o600, &bolt.Options{
		Timeout:         lockTimeout,
		FreelistType:    bolt.FreelistMapType,
		InitialMmapSize: initialMmapSize,
	})
	if errors.Is(err, bolterrors.ErrTimeout) {
		return nil, fmt.Errorf("boltstore: %s is in use by another process", path)
	}
	if err != nil {
		return nil, fmt.Errorf("boltstore: open %s: %w", path, err)
	}
	err = db.Update(func(tx *bolt.Tx) error {
		_, err := tx.CreateBucketIfNotExists(gamesBucket)
		return err
	})
	if err != nil {
		db.Close()
		return nil, fmt.Errorf("boltstore: initialise %s: %w", path, err)
	}
	s := &Store{
		db:        db,
		ops:       make(chan *writeOp),
		closing:   make(chan struct{}),
		writerEnd: make(chan struct{}),
	}
	go s.writer()
	return s, nil
}

// Close stops accepting writes, waits for the ones already queued to
// commit, and closes the file. Acknowledged writes are already durable.
func (s *Store) Close() error {
	s.closeOnce.Do(func() {
		close(s.closing)
		<-s.writerEnd
		if err := s.db.Close(); err != nil {
			s.closeErr = fmt.Errorf("boltstore: close: %w", err)
		}
	})
	return s.closeErr
}

// Path is the database file's path.
func (s *Store) Path() string { return s.db.Path() }

// TooLargeError is returned (wrapping service.ErrTooLarge) for a record over
// MaxRecordSize. Nothing is written then.
type TooLargeError struct {
	Size, Limit int
}

func (e *TooLargeError) Error() string {
	return fmt.Sprintf("record would be %d bytes, over the %d-byte limit", e.Size, e.Limit)
}

func (e *TooLargeError) Unwrap() error { return service.ErrTooLarge }

var errEmptyID = errors.New("empty game id")

// encode validates rec and encodes it.
func encode(rec service.GameRecord) ([]byte, error) {
	switch {
	case rec.GameID == "":
		return nil, errEmptyID
	case len(rec.GameID) > maxKeySize:
		return nil, fmt.Errorf("game id of %d bytes is over %d", len(rec.GameID), maxKeySize)
	case rec.Version < 1:
		return nil, fmt.Errorf("version %d is not positive", rec.Version)
	case rec.StateVersion < 0:
		return nil, fmt.Errorf("state version %d is negative", rec.StateVersion)
	}
	if err := rules.ValidateIndex(rec.GameID, rec.Index); err != nil {
		return nil, err
	}
	value, stateAt := encodeRecord(rec, true)
	// The limit is on the record as it is, not as compressed: a read
	// refuses a state that decompresses past it (maxStateSize), and the
	// DynamoDB store's limit does not depend on this store's compression.
	if size := len(rec.GameID) + stateAt + len(rec.State); size > MaxRecordSize {
		return nil, &TooLargeError{Size: size, Limit: MaxRecordSize}
	}
	return value, nil
}

// Create stores a new record; service.ErrAlreadyExists if the id is taken.
func (s *Store) Create(ctx context.Context, rec service.GameRecord) error {
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("boltstore: create game %q: %w", rec.GameID, err)
	}
	value, err := encode(rec)
	if err != nil {
		return fmt.Errorf("boltstore: create game %q: %w", rec.GameID, err)
	}
	err = s.write(ctx, &writeOp{key: []byte(rec.GameID), value: value, index: rec.Index, create: true})
	if err != nil {
		return fmt.Errorf("boltstore: create game %q: %w", rec.GameID, err)
	}
	return nil
}

// Get returns the stored record; service.ErrNotFound if there is none.
func (s *Store) Get(ctx context.Context, gameID string) (service.GameRecord, error) {
	if err := ctx.Err(); err != nil {
		return service.GameRecord{}, fmt.Errorf("boltstore: get game %q: %w", gameID, err)
	}
	if gameID == "" {
		return service.GameRecord{}, fmt.Errorf("boltstore: get game: %w", errEmptyID)
	}
	var rec service.GameRecord
	err := s.db.View(func(tx *bolt.Tx) error {
		value := tx.Bucket(gamesBucket).Get([]byte(gameID))
		if value == nil {
			return service.ErrNotFound
		}
		var err error
		rec, err = decodeRecord(gameID, value)
		return err
	})
	if err != nil {
		return service.GameRecord{}, fmt.Errorf("boltstore: get game %q: %w", gameID, err)
	}
	return rec, nil
}

// Update replaces the record if its stored version is expectedVersion;
// service.ErrVersionConflict otherwise, also when there is no record.
func (s *Store) Update(ctx context.Context, rec service.GameRecord, expectedVersion int64) error {
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("boltstore: update game %q: %w", rec.GameID, err)
	}
	value, err := encode(rec)
	if err != nil {
		return fmt.Errorf("boltstore: update game %q: %w", rec.GameID, err)
	}
	err = s.write(ctx, &writeOp{key: []byte(rec.GameID), value: value, index: rec.Index, expected: expectedVersion})
	if err != nil {
		return fmt.Errorf("boltstore: update game %q from version %d: %w", rec.GameID, expectedVersion, err)
	}
	return nil
}

// writeOp is one queued write: a game's Create or Update, or (run set)
// any other write.
type writeOp struct {
	key, value []byte
	index      service.GameIndex // the new record's index
	create     bool              // Create; else Update from expected
	expected   int64             // Update's expected stored version
	// run, when set, is applied in the group's transaction instead of the
	// game write above (players.go). Its outcome is its own answer; err
	// fails the whole group. It must decide before it writes anything,
	// because what it wrote commits with the group whatever its outcome.
	run    func(tx *bolt.Tx) (outcome, err error)
	result chan error
}

// write queues op for the writer and waits for its outcome. Once queued, an
// op is committed or refused whatever happens to ctx, so the caller always
// learns which.
func (s *Store) write(ctx context.Context, op *writeOp) error {
	op.result = make(chan error, 1)
	select {
	case s.ops <- op:
	case <-s.closing:
		return errClosed
	case <-ctx.Done():
		return ctx.Err()
	}
	return <-op.result
}

// writer commits queued writes: it takes one, gathers whatever else is
// already waiting, applies them in arrival order in one transaction, and
// answers each after the commit (and its fsync) returned.
func (s *Store) writer() {
	defer close(s.writerEnd)
	group := make([]*writeOp, 0, maxGroup)
	results := make([]error, 0, maxGroup)
	for {
		group = group[:0]
		select {
		case op := <-s.ops:
			group = append(group, op)
		case <-s.closing:
			return
		}
	gather:
		for len(group) < maxGroup {
			select {
			case op := <-s.ops:
				group = append(group, op)
			default:
				break gather
			}
		}
		results = results[:len(group)]
		err := s.db.Update(func(tx *bolt.Tx) error {
			for i, op := range group {
				res, err := apply(tx, op)
				if err != nil {
					return err // the transaction is broken: fail them all
				}
				results[i] = res
			}
			return nil
		})
		for i, op := range group {
			if err != nil {
				op.result <- err
			} else {
				op.result <- results[i]
			}
		}
	}
}

// apply runs one write inside the group's transaction. outcome is the
// write's own answer (nil, ErrAlreadyExists, ErrVersionConflict, a corrupt
// stored record); err is a failure of the transaction itself. A game write
// moves the game's index keys with the record (index.go), so a reader sees
// both as of the same commit.
func apply(tx *bolt.Tx, op *writeOp) (outcome, err error) {
	if op.run != nil {
		return op.run(tx)
	}
	b := tx.Bucket(gamesBucket)
	old := b.Get(op.key)
	var oldIndex service.GameIndex
	if op.create {
		if old != nil {
			return service.ErrAlreadyExists, nil
		}
	} else {
		if old == nil {
			return service.ErrVersionConflict, nil
		}
		h, err := decodeHeader(old)
		if err != nil {
			return err, nil
		}
		if h.version != op.expected {
			return service.ErrVersionConflict, nil
		}
		oldIndex = h.index
	}
	if err := moveIndex(tx, string(op.key), oldIndex, op.index); err != nil {
		return nil, err
	}
	return nil, b.Put(op.key, op.value)
}

// PendingTimeouts lists every live game (no ExpiresAt) that has a deadline,
// as the tasks to schedule: after a restart the local server re-arms its
// in-process timers from it. A game's task is for the instant its record
// says its timer is armed for when that comes first (even past: the timer
// that was due when the server stopped fires at once), else its deadline:
// the game's later writes rely on the armed instant. Games are in key
// order.
func (s *Store) PendingTimeouts(ctx context.Context) ([]service.TimeoutTask, error) {
	var tasks []service.TimeoutTask
	err := s.db.View(func(tx *bolt.Tx) error {
		return tx.Bucket(gamesBucket).ForEach(func(k, v []byte) error {
			if err := ctx.Err(); err != nil {
				return err
			}
			h, err := decodeHeader(v)
			if err != nil {
				return fmt.Errorf("game %q: %w", k, err)
			}
			if h.deadline.IsZero() || !h.expiresAt.IsZero() {
				return nil
			}
			at := h.deadline
			if !h.armedAt.IsZero() && h.armedAt.Before(at) {
				at = h.armedAt
			}
			tasks = append(tasks, service.TimeoutTask{GameID: string(k), Version: h.version, Deadline: at})
			return nil
		})
	})
	if err != nil {
		return nil, fmt.Errorf("boltstore: list pending timeouts: %w", err)
	}
	return tasks, nil
}

// FinishedSince lists the records of the games that finished (their last
// write) at or after since, in key order: after a restart the local server
// applies any rating change whose effect a crash cut short (the service's
// application is idempotent).
func (s *Store) FinishedSince(ctx context.Context, since time.Time) ([]service.GameRecord, error) {
	var recs []service.GameRecord
	err := s.db.View(func(tx *bolt.Tx) error {
		return tx.Bucket(gamesBucket).ForEach(func(k, v []byte) error {
			if err := ctx.Err(); err != nil {
				return err
			}
			h, err := decodeHeader(v)
			if err != nil {
				return fmt.Errorf("game %q: %w", k, err)
			}
			if !h.index.Finished || h.index.UpdatedAt.Before(since) {
				return nil
			}
			rec, err := decodeRecord(string(k), v)
			if err != nil {
				return err
			}
			recs = append(recs, rec)
			return nil
		})
	})
	if err != nil {
		return nil, fmt.Errorf("boltstore: list finished games: %w", err)
	}
	return recs, nil
}

// DeleteExpired removes the records whose ExpiresAt is at or before now,
// the local stand-in for DynamoDB's TTL deletion, and returns how many it
// removed.
func (s *Store) DeleteExpired(ctx context.Context, now time.Time) (int, error) {
	deleted := 0
	err := s.db.Update(func(tx *bolt.Tx) error {
		b := tx.Bucket(gamesBucket)
		// Collect first: deleting under a moving cursor skips items. The
		// index keys of each game go with it.
		var expired [][]byte
		var keys []indexKey
		err := b.ForEach(func(k, v []byte) error {
			if err := ctx.Err(); err != nil {
				return err
			}
			h, err := decodeHeader(v)
			if err != nil {
				return fmt.Errorf("game %q: %w", k, err)
			}
			if !h.expiresAt.IsZero() && !h.expiresAt.After(now) {
				expired = append(expired, append([]byte(nil), k...))
				keys = append(keys, indexKeys(string(k), h.index)...)
			}
			return nil
		})
		if err != nil {
			return err
		}
		for _, k := range expired {
			if err := b.Delete(k); err != nil {
				return err
			}
		}
		if err := deleteIndexKeys(tx, keys); err != nil {
			return err
		}
		deleted = len(expired)
		return nil
	})
	if err != nil {
		return 0, fmt.Errorf("boltstore: delete expired games: %w", err)
	}
	return deleted, nil
}

// StartSweeper deletes expired records, and the expired items of the
// players port (DeleteExpiredData), every interval (the local stand-in
// for DynamoDB's TTL deletion) until the returned stop is called; stop
// waits for a sweep in progress.
func (s *Store) StartSweeper(interval time.Duration, log *slog.Logger) (stop func()) {
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		ticker := time.NewTicker(interval)
		defer ticker.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-ticker.C:
				if n, err := s.DeleteExpired(ctx, time.Now()); err != nil {
					log.Warn("expire finished games", "err", err)
				} else if n > 0 {
					log.Info("expired finished games", "deleted", n)
				}
				if n, err := s.DeleteExpiredData(ctx, time.Now()); err != nil {
					log.Warn("expire link codes, counters and slots", "err", err)
				} else if n > 0 {
					log.Debug("expired link codes, counters and slots", "deleted", n)
				}
				if n, err := s.DeleteExpiredNotifications(ctx, time.Now()); err != nil {
					log.Warn("expire notifications", "err", err)
				} else if n > 0 {
					log.Debug("expired notifications and push claims", "deleted", n)
				}
			}
		}
	}()
	return func() { cancel(); <-done }
}
