package dynamostore

import (
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"chessapi/shared/service"
)

// The item layout: one item per game.
//
//	gameId        S  partition key
//	version       N  optimistic-concurrency counter (1 at creation)
//	stateVersion  N  schema version of state
//	state         B  the encoded game state (absent when empty), compressed
//	                 when it is larger than a kilobyte (compress.go)
//	stateEncoding S  "zstd" when state is compressed (absent otherwise)
//	deadline      N  epoch milliseconds, rounded up (absent when none)
//	armedAt       N  epoch milliseconds, rounded up: the instant the game's
//	                 timer is armed for (absent when none is)
//	expiresAt     N  epoch seconds, rounded up; the table's TTL attribute
//	                 (absent while the game is live)
//
// and, when the record has a game index (index.go), the attributes of the
// index, each written only when it applies so the GSIs stay sparse.
const (
	attrGameID       = "gameId"
	attrVersion      = "version"
	attrStateVersion = "stateVersion"
	attrState        = "state"
	attrEncoding     = "stateEncoding"
	attrDeadline     = "deadline"
	attrArmedAt      = "armedAt"
	attrExpiresAt    = "expiresAt"
	// attrWriteToken is a random value every Create and Update writes, so
	// a writer whose conditional write failed can tell whether the item
	// holding its version is its own (an SDK retry of a write that had
	// succeeded) or a concurrent writer's. Not part of the record.
	attrWriteToken = "writeToken"
)

// KeyAttribute is the table's partition key (type S).
const KeyAttribute = attrGameID

// TTLAttribute is the attribute the table's time-to-live must be set on.
const TTLAttribute = attrExpiresAt

// MaxItemSize is DynamoDB's item size limit (400 KB), counted as DynamoDB
// does: the UTF-8 length of every attribute name plus the size of its value.
const MaxItemSize = 400 * 1024

// encodeItem turns a record into an item. Times are rounded up (deadline to
// the millisecond, expiry to the second) so the stored instant is never
// earlier than the one asked for.
func encodeItem(rec service.GameRecord) map[string]types.AttributeValue {
	item := map[string]types.AttributeValue{
		attrGameID:       &types.AttributeValueMemberS{Value: rec.GameID},
		attrVersion:      number(rec.Version),
		attrStateVersion: number(int64(rec.StateVersion)),
	}
	// Empty binary values are refused by some DynamoDB implementations, so
	// an empty state is stored as an absent attribute.
	if len(rec.State) > 0 {
		stored, encoding := compressState(rec.State)
		item[attrState] = &types.AttributeValueMemberB{Value: stored}
		if encoding != "" {
			item[attrEncoding] = &types.AttributeValueMemberS{Value: encoding}
		}
	}
	if !rec.Deadline.IsZero() {
		item[attrDeadline] = number(service.DeadlineMillis(rec.Deadline))
	}
	if !rec.ArmedAt.IsZero() {
		item[attrArmedAt] = number(service.DeadlineMillis(rec.ArmedAt))
	}
	if !rec.ExpiresAt.IsZero() {
		item[attrExpiresAt] = number(service.ExpirySeconds(rec.ExpiresAt))
	}
	encodeIndex(item, rec.GameID, rec.Index)
	return item
}

// EncodeItem is the item of a record (tests that play the table's change
// stream build their records with it).
func EncodeItem(rec service.GameRecord) map[string]types.AttributeValue { return encodeItem(rec) }

// DecodeItem is the record of an item read from the table or its change
// stream (the fan-out function reads stream images with it).
func DecodeItem(item map[string]types.AttributeValue) (service.GameRecord, error) {
	return decodeItem(item)
}

// decodeItem turns an item read from the table back into a record. A
// missing or malformed attribute is an *ItemError: the table holds
// something this code did not write.
func decodeItem(item map[string]types.AttributeValue) (service.GameRecord, error) {
	var rec service.GameRecord
	id, ok := item[attrGameID].(*types.AttributeValueMemberS)
	if !ok {
		return rec, &ItemError{Attribute: attrGameID, Reason: "missing or not a string"}
	}
	rec.GameID = id.Value
	fail := func(attr, reason string) (service.GameRecord, error) {
		return service.GameRecord{}, &ItemError{GameID: rec.GameID, Attribute: attr, Reason: reason}
	}

	version, present, err := intAttr(item, attrVersion)
	if err != nil || !present {
		return fail(attrVersion, reasonOf(err, present))
	}
	if version < 1 {
		return fail(attrVersion, fmt.Sprintf("%d is not positive", version))
	}
	rec.Version = version

	stateVersion, present, err := intAttr(item, attrStateVersion)
	if err != nil || !present {
		return fail(attrStateVersion, reasonOf(err, present))
	}
	if stateVersion < 0 || stateVersion > math.MaxInt32 {
		return fail(attrStateVersion, fmt.Sprintf("%d is out of range", stateVersion))
	}
	rec.StateVersion = int(stateVersion)

	if v, found := item[attrState]; found {
		state, ok := v.(*types.AttributeValueMemberB)
		if !ok {
			return fail(attrState, "not binary")
		}
		var encoding string
		if e, found := item[attrEncoding]; found {
			s, ok := e.(*types.AttributeValueMemberS)
			if !ok {
				return fail(attrEncoding, "not a string")
			}
			encoding = s.Value
		}
		plain, err := decompressState(state.Value, encoding)
		if err != nil {
			return fail(attrState, err.Error())
		}
		rec.State = plain
	}

	ms, present, err := intAttr(item, attrDeadline)
	if err != nil {
		return fail(attrDeadline, err.Error())
	}
	if present {
		rec.Deadline = time.UnixMilli(ms).UTC()
	}

	ms, present, err = intAttr(item, attrArmedAt)
	if err != nil {
		return fail(attrArmedAt, err.Error())
	}
	if present {
		rec.ArmedAt = time.UnixMilli(ms).UTC()
	}

	sec, present, err := intAttr(item, attrExpiresAt)
	if err != nil {
		return fail(attrExpiresAt, err.Error())
	}
	if present {
		rec.ExpiresAt = time.Unix(sec, 0).UTC()
	}
	if rec.Index, err = decodeIndex(item); err != nil {
		var itemErr *ItemError
		if errors.As(err, &itemErr) {
			itemErr.GameID = rec.GameID
		}
		return service.GameRecord{}, err
	}
	return rec, nil
}

// ItemError reports an item in the table that is not a valid game record.
type ItemError struct {
	GameID    string // empty when the key itself is bad
	Attribute string
	Reason    string
}

func (e *ItemError) Error() string {
	return fmt.Sprintf("dynamostore: game %q: attribute %s: %s", e.GameID, e.Attribute, e.Reason)
}

func reasonOf(err error, present bool) string {
	if !present {
		return "missing"
	}
	return err.Error()
}

// intAttr reads an optional integer N attribute.
func intAttr(item map[string]types.AttributeValue, name string) (value int64, present bool, err error) {
	v, found := item[name]
	if !found {
		return 0, false, nil
	}
	n, ok := v.(*types.AttributeValueMemberN)
	if !ok {
		return 0, true, fmt.Errorf("not a number")
	}
	value, err = strconv.ParseInt(n.Value, 10, 64)
	if err != nil {
		return 0, true, fmt.Errorf("%q is not a 64-bit integer", n.Value)
	}
	return value, true, nil
}

func number(v int64) *types.AttributeValueMemberN {
	return &types.AttributeValueMemberN{Value: strconv.FormatInt(v, 10)}
}

// itemSize is the size DynamoDB charges an item against MaxItemSize:
// for each attribute the UTF-8 length of its name plus the size of its
// value. It covers the value types this package writes (S, B, N).
func itemSize(item map[string]types.AttributeValue) int {
	size := 0
	for name, v := range item {
		size += len(name)
		switch v := v.(type) {
		case *types.AttributeValueMemberS:
			size += len(v.Value)
		case *types.AttributeValueMemberB:
			size += len(v.Value)
		case *types.AttributeValueMemberN:
			size += numberSize(v.Value)
		default:
			panic(fmt.Sprintf("dynamostore: itemSize: unexpected attribute type %T", v))
		}
	}
	return size
}

// numberSize is the stored size of an integer N value. DynamoDB keeps
// numbers as base-100 digit pairs aligned on the decimal point, with
// leading and trailing zero pairs dropped, plus one byte of exponent and
// one more for a negative sign. (The formula is the one dynalite
// reverse-engineered from DynamoDB; the tests check it against dynalite's
// limit byte for byte.)
func numberSize(decimal string) int {
	negative := strings.HasPrefix(decimal, "-")
	digits := strings.TrimLeft(strings.TrimPrefix(decimal, "-"), "0")
	if digits == "" {
		return 1 // zero
	}
	exponent := len(digits) - 1 // position of the leading digit
	significant := strings.TrimRight(digits, "0")
	n := len(significant)
	size := 1 + (n+1)/2
	// An even count of significant digits that starts on an even exponent
	// straddles one more base-100 pair.
	if n%2 == 0 && exponent%2 == 0 {
		size++
	}
	if negative {
		size++
	}
	return size
}
