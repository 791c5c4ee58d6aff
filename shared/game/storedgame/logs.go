package storedgame

import (
	"bytes"
	"encoding/json"
	"strconv"

	"chessapi/shared/game"
)

// The logs follow the moves, one entry after another, without any JSON to
// scan; lengths make them safe for any bytes:
//
//	change entry:  "c<version> <at> <events len>:" events
//	its delta:     "d<delta len>:" delta (right after its change entry;
//	               none for a change without one)
//	request entry: "h<seat 0|1> <version> <id len> <hash len> <events len>:" id hash events
//	request entry whose events are its version's change entry (no copy):
//	               "r<seat 0|1> <version> <id len> <hash len>:" id hash
//
// Records of the first writer (legacy.go) have request entries without a
// tag or a hash, and no change log: "<seat> <version> <id len> <events
// len>:" id events.
func appendLogs(b []byte, requests *game.PerColor[[]game.AppliedRequest], changes []game.Change) []byte {
	for _, ch := range changes {
		b = append(b, 'c')
		b = strconv.AppendInt(b, ch.Version, 10)
		b = append(b, ' ')
		b = strconv.AppendInt(b, ch.At, 10)
		b = append(b, ' ')
		b = strconv.AppendInt(b, int64(len(ch.Events)), 10)
		b = append(b, ':')
		b = append(b, ch.Events...)
		if len(ch.Delta) > 0 {
			b = append(b, 'd')
			b = strconv.AppendInt(b, int64(len(ch.Delta)), 10)
			b = append(b, ':')
			b = append(b, ch.Delta...)
		}
	}
	for c, entries := range requests {
		for _, r := range entries {
			shared := false
			if len(changes) > 0 {
				if i := r.Version - changes[0].Version; i >= 0 && i < int64(len(changes)) {
					shared = bytes.Equal(changes[i].Events, r.Events)
				}
			}
			if shared {
				b = append(b, 'r')
			} else {
				b = append(b, 'h')
			}
			b = strconv.AppendInt(b, int64(c), 10)
			b = append(b, ' ')
			b = strconv.AppendInt(b, r.Version, 10)
			b = append(b, ' ')
			b = strconv.AppendInt(b, int64(len(r.ID)), 10)
			b = append(b, ' ')
			b = strconv.AppendInt(b, int64(len(r.Hash)), 10)
			if !shared {
				b = append(b, ' ')
				b = strconv.AppendInt(b, int64(len(r.Events)), 10)
			}
			b = append(b, ':')
			b = append(b, r.ID...)
			b = append(b, r.Hash...)
			if !shared {
				b = append(b, r.Events...)
			}
		}
	}
	return b
}

// requestTextLength is room for the ids and fingerprints of two full
// request logs (UUIDs and 16-digit fingerprints, with some to spare).
const requestTextLength = 2 * game.RequestLogSize * 64

// parseLogs reads the logs section. The entries' events are slices of b
// (which Decode has taken over); ids and fingerprints are strings of strs.
// untagged allows the first writer's request entries. The logs are made
// with room for a full log each, one allocation instead of one per
// doubling (a transition clones them before it appends).
func parseLogs(b []byte, requests *game.PerColor[[]game.AppliedRequest], changes *[]game.Change, strs *strs, untagged bool) error {
	type link struct{ seat, index int }
	var links []link // 'r' entries, whose events come from the change log
	for len(b) > 0 {
		switch tag := b[0]; {
		case tag == 'c':
			n, rest, ok := logNumbers(b[1:], 3)
			if !ok || n[2] < 0 || n[2] > int64(len(rest)) {
				return &DecodeError{Reason: "change log entry"}
			}
			if k := len(*changes); k > 0 && (*changes)[k-1].Version+1 != n[0] {
				return &DecodeError{Reason: "change log versions not consecutive"}
			}
			if *changes == nil {
				*changes = make([]game.Change, 0, game.ChangeLogSize)
			}
			*changes = append(*changes, game.Change{Version: n[0], At: n[1], Events: json.RawMessage(rest[:n[2]:n[2]])})
			b = rest[n[2]:]
		case tag == 'd':
			n, rest, ok := logNumbers(b[1:], 1)
			k := len(*changes)
			if !ok || n[0] <= 0 || n[0] > int64(len(rest)) || k == 0 || len((*changes)[k-1].Delta) > 0 {
				return &DecodeError{Reason: "change log delta"}
			}
			(*changes)[k-1].Delta = json.RawMessage(rest[:n[0]:n[0]])
			b = rest[n[0]:]
		case tag == 'h' || tag == 'r':
			count := 5
			if tag == 'r' {
				count = 4
			}
			n, rest, ok := logNumbers(b[1:], count)
			if !ok || n[0] < 0 || n[0] > 1 || n[2] < 0 || n[3] < 0 || n[4] < 0 || n[2]+n[3]+n[4] > int64(len(rest)) {
				return &DecodeError{Reason: "request log entry"}
			}
			id, hash := rest[:n[2]], rest[n[2]:n[2]+n[3]]
			end := n[2] + n[3] + n[4]
			seat := int(n[0])
			if tag == 'r' {
				if links == nil {
					links = make([]link, 0, 2*game.RequestLogSize)
				}
				links = append(links, link{seat, len(requests[seat])})
			}
			if requests[seat] == nil {
				requests[seat] = make([]game.AppliedRequest, 0, game.RequestLogSize)
			}
			requests[seat] = append(requests[seat], game.AppliedRequest{ID: strs.of(id), Version: n[1], Hash: strs.of(hash), Events: json.RawMessage(rest[n[2]+n[3] : end : end])})
			b = rest[end:]
		case untagged && tag >= '0' && tag <= '9':
			n, rest, ok := logNumbers(b, 4)
			if !ok || n[0] < 0 || n[0] > 1 || n[2] < 0 || n[3] < 0 || n[2]+n[3] > int64(len(rest)) {
				return &DecodeError{Reason: "request log entry"}
			}
			events := rest[n[2] : n[2]+n[3] : n[2]+n[3]]
			requests[n[0]] = append(requests[n[0]], game.AppliedRequest{ID: strs.of(rest[:n[2]]), Version: n[1], Events: json.RawMessage(events)})
			b = rest[n[2]+n[3]:]
		default:
			return &DecodeError{Reason: "log entry tag"}
		}
	}
	for _, l := range links {
		r := &requests[l.seat][l.index]
		i := -1
		if len(*changes) > 0 {
			i = int(r.Version - (*changes)[0].Version)
		}
		if i < 0 || i >= len(*changes) {
			return &DecodeError{Reason: "request log entry refers to a version the change log does not hold"}
		}
		r.Events = (*changes)[i].Events
	}
	return nil
}
