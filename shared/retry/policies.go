package retry

import "time"

// The retry policies of this codebase, one per kind of work: the one place
// to read (and change) how often and how far apart something is tried
// again. Callers copy them (a Policy is a value) and may narrow a copy
// from their configuration (WithAttempts, WithBase); nothing assigns to
// these variables.
var (
	// GameWrite is the one game transaction's bound (service.update): a
	// load → apply → conditional write round that lost to a concurrent
	// write runs again at once from a fresh read (the loser's read was
	// what was stale, there is nothing to wait for), 8 rounds at most;
	// then the request is answered ErrBusy. A request pinned to a version
	// (expectedVersion) is never run again: the service answers its lost
	// race itself.
	GameWrite = Policy{Attempts: 8}

	// PlayerWrite bounds the one player-update loop (service.updatePlayer):
	// renames, rating applications, recovery codes and every later change
	// of a player record. Within a process the changes of one player queue
	// (the service serialises them), so a lost race is always to another
	// process (on AWS: the fan-out of another stream shard ending another
	// game of the same player). Unlike a game's writers, such writers
	// arrive together (games of one player ending at once) and would
	// collide round after round if they retried at once: 24 rounds, the
	// pauses drawn at random below 2 ms doubling to 100 ms (full jitter),
	// so that n writers are through in about n rounds — 20 concurrent
	// rated ends of one player from 4 processes pass without a busy
	// answer (service's TestRatingsChainAcrossProcesses) — and the last
	// waits at most about 2 s.
	PlayerWrite = Policy{Attempts: 24, Base: 2 * time.Millisecond, Max: 100 * time.Millisecond, Jitter: 1}

	// Effect is the inline retry of each after-write effect of a commit
	// (arming the game's timer, starting the AI, applying ratings): 4
	// tries, 100 ms then doubling, half of each wait jittered, because
	// these calls go to shared services (EventBridge Scheduler, Lambda,
	// DynamoDB) that throttle many callers at once.
	Effect = Policy{Attempts: 4, Base: 100 * time.Millisecond, Jitter: 0.5}

	// EffectBacklog spaces the background retries of a commit whose
	// effects still failed after Effect: 2 s doubling up to 5 min, with no
	// bound on the tries (they end when the effects succeed or a newer
	// commit of the game supersedes them).
	EffectBacklog = Policy{Attempts: Unlimited, Base: 2 * time.Second, Max: 5 * time.Minute}

	// AITurn retries an AI turn run in this process (the local server's
	// stand-in for the async Lambda invoke and its retries): 5 runs, 500 ms
	// doubling up to 8 s. No jitter: one process, no herd to spread.
	AITurn = Policy{Attempts: 5, Base: 500 * time.Millisecond, Max: 8 * time.Second}

	// Timeout retries a due timeout handled in this process (the local
	// scheduler): 8 calls, 1 s doubling up to 1 min; after the last the game
	// is left to lazy enforcement (its next request applies the timeout).
	Timeout = Policy{Attempts: 8, Base: time.Second, Max: time.Minute}

	// ConnectionPost retries one post to an API Gateway WebSocket
	// connection on throttling (429) or a 5xx: 3 tries, 100 then 200 ms
	// apart, half of each wait jittered (a fan-out posts to many
	// connections at once and is throttled as one). A gone connection
	// (410) and other 4xx answers are permanent.
	ConnectionPost = Policy{Attempts: 3, Base: 100 * time.Millisecond, Jitter: 0.5}

	// NotifyWebhook retries a notification posted to the local webhook
	// (NOTIFY_WEBHOOK_URL, SPEC §16.3: "failures retried 3 times, then
	// dropped"): 4 posts, 500 ms doubling, half jittered, off the request
	// path (notify/webhook queues them).
	NotifyWebhook = Policy{Attempts: 4, Base: 500 * time.Millisecond, Jitter: 0.5}

	// QuickPair bounds the rounds of a quick pairing (service.QuickPair):
	// a round is lost only to another requester taking the same seat, so
	// each lost round is progress for someone; 40 rounds, each pause drawn
	// at random below 20 ms so that requesters do not collide in step.
	QuickPair = Policy{Attempts: 40, Base: 20 * time.Millisecond, Max: 20 * time.Millisecond, Jitter: 1}
)
