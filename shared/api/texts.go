package api

import (
	"errors"
	"fmt"
	"sort"
	"strconv"
	"strings"

	"chessapi/shared/chess"
	"chessapi/shared/game"
	"chessapi/shared/service"
)

// Every human text of the API lives here: error messages, the words for
// request problems, result summaries and AI names, in Korean (the default,
// SPEC §14) and English. Codes never change with the language.

// Lang is a language of human texts.
type Lang uint8

const (
	Korean Lang = iota
	English
)

// String returns the language tag.
func (l Lang) String() string {
	if l == English {
		return "en"
	}
	return "ko"
}

// ParseLang reads a language tag ("en", "ko", "en-US"); false when it is
// none of ours.
func ParseLang(tag string) (Lang, bool) {
	primary, _, _ := strings.Cut(strings.ToLower(strings.TrimSpace(tag)), "-")
	switch primary {
	case "en":
		return English, true
	case "ko":
		return Korean, true
	}
	return Korean, false
}

// NegotiateLang picks the language of an Accept-Language header: the
// supported language with the highest quality, Korean when none is named
// (or on a tie, the earlier one).
func NegotiateLang(header string) Lang {
	type choice struct {
		lang Lang
		q    float64
		pos  int
	}
	var choices []choice
	for i, part := range strings.Split(header, ",") {
		tag, params, _ := strings.Cut(part, ";")
		lang, ok := ParseLang(tag)
		if !ok {
			continue
		}
		q := 1.0
		if v, found := strings.CutPrefix(strings.TrimSpace(params), "q="); found {
			if f, err := strconv.ParseFloat(v, 64); err == nil {
				q = f
			}
		}
		if q > 0 {
			choices = append(choices, choice{lang, q, i})
		}
	}
	if len(choices) == 0 {
		return Korean
	}
	sort.SliceStable(choices, func(a, b int) bool { return choices[a].q > choices[b].q })
	return choices[0].lang
}

// texts is one language's catalogue.
type texts struct {
	codes    map[string]string // error code → message
	problems func(e *game.InputError) string
	syntax   map[string]string // syntaxError.why → message
	fen      func(err error) string
	reasons  map[game.Reason]string
	summary  func(winner *chess.Color, reason string, moveCount int) string
	aiName   func(level string) string
	// notification words a notification: its title and body
	// (notifications.go).
	notification func(n service.Notification, t *texts) (title, body string)
	// deletedPlayer is the label of a deleted player's seats.
	deletedPlayer string
}

func catalogue(l Lang) *texts {
	if l == English {
		return &english
	}
	return &korean
}

// message returns the human text of an error code.
func (l Lang) message(code string) string {
	if m, ok := catalogue(l).codes[code]; ok {
		return m
	}
	return catalogue(l).codes["internal"]
}

// Summary is the one-line result in language l: "흑 승 (체크메이트, 28수)",
// "Black won (checkmate, 28 moves)".
func (l Lang) Summary(winner *chess.Color, reason game.Reason, moveCount int) string {
	t := catalogue(l)
	return t.summary(winner, t.reasons[reason], moveCount)
}

// AIName is an AI seat's display name in language l: "AI (쉬움)", "AI (easy)".
func (l Lang) AIName(level string) string { return catalogue(l).aiName(level) }

// DeletedPlayerName is the label of a deleted player's seats in language
// l: "탈퇴한 사용자", "Deleted player".
func (l Lang) DeletedPlayerName() string { return catalogue(l).deletedPlayer }

// RankLabel is a rank key's label (seeds/003): "kyu10" is "10급" or
// "10 kyu", "dan2" "2단" or "2 dan".
func (l Lang) RankLabel(key string) string {
	for _, k := range []struct{ prefix, ko, en string }{{"kyu", "급", " kyu"}, {"dan", "단", " dan"}} {
		if n, ok := strings.CutPrefix(key, k.prefix); ok {
			if l == English {
				return n + k.en
			}
			return n + k.ko
		}
	}
	return key
}

var korean = texts{
	codes: map[string]string{
		// 400
		"invalid_json":    "요청 본문이 올바른 JSON 객체가 아니에요",
		"missing_field":   "필요한 항목이 빠졌어요",
		"unknown_field":   "알 수 없는 항목이에요",
		"duplicate_field": "같은 항목이 두 번 있어요",
		"invalid_field":   "값이 올바르지 않아요",
		"invalid_fen":     "FEN이 올바르지 않아요",
		"invalid_body":    "요청 본문을 읽을 수 없어요",
		"invalid_path":    "요청 주소를 읽을 수 없어요",
		// 401 / 403 / 404 / 405 / 409 / 413 / 429
		"unauthorized":           "좌석 토큰이 필요해요 (Authorization: Bearer <token>)",
		"invalid_token":          "토큰이 올바르지 않거나 더 이상 쓸 수 없어요 (Authorization: Bearer <token>)",
		"invalid_api_key":        "API 키가 없거나 올바르지 않아요",
		"forbidden":              "이 대국의 좌석 토큰이 아니에요",
		"player_required":        "플레이어 토큰이 필요해요 (POST /v1/players로 만들 수 있어요)",
		"invite_required":        "초대 코드가 있어야 들어갈 수 있는 대국이에요",
		"rating_out_of_range":    "레이팅이 이 방의 입장 조건에 맞지 않아요",
		"link_code_invalid":      "연결 코드가 없거나 이미 쓰였거나 만료됐어요",
		"recovery_code_invalid":  "복구 코드가 맞지 않아요",
		"player_not_found":       "플레이어를 찾을 수 없어요",
		"session_not_found":      "세션을 찾을 수 없어요",
		"blocked":                "차단한 사이거나 차단된 사이라서 함께 둘 수 없어요",
		"too_many_blocks":        "더 차단할 수 없어요 (최대 500명)",
		"game_not_found":         "대국을 찾을 수 없어요",
		"not_found":              "없는 주소예요",
		"method_not_allowed":     "이 주소에서 쓸 수 없는 메서드예요",
		"version_conflict":       "대국이 그사이에 바뀌었어요. 최신 상태를 확인해 주세요",
		"body_too_large":         "요청 본문이 너무 커요 (최대 64KB)",
		"rate_limited":           "요청이 너무 많아요. 잠시 후 다시 시도해 주세요",
		"too_many_subscriptions": "한 연결에서 최대 10개 대국까지 구독할 수 있어요",
		"too_many_devices":       "기기는 최대 10대까지 등록할 수 있어요. 쓰지 않는 기기를 지워 주세요",
		"device_not_found":       "등록된 기기를 찾을 수 없어요",
		"notification_not_found": "알림을 찾을 수 없어요",
		"platform_unavailable":   "이 서비스는 이 플랫폼으로 알림을 보낼 수 없어요",
		// 422 and 409 rule codes (the four move refusals are SPEC §5's texts)
		"not_your_turn":       "지금은 상대 차례예요",
		"illegal_move":        "그 기물은 그렇게 움직일 수 없어요",
		"king_in_check":       "킹이 공격받게 되어 둘 수 없어요",
		"promotion_required":  "승진할 기물을 골라 주세요",
		"ambiguous_move":      "어느 기물을 움직일지 알 수 없어요. 출발 칸을 함께 알려 주세요",
		"game_not_playing":    "진행 중인 대국이 아니에요",
		"game_full":           "이미 두 자리가 모두 찼어요",
		"game_not_waiting":    "상대를 기다리는 대국이 아니에요",
		"already_seated":      "이미 이 대국에 앉아 있어요",
		"time_expired":        "시간이 다 되어 더 둘 수 없어요",
		"undo_disabled":       "이 대국에서는 무르기를 할 수 없어요",
		"undo_limit":          "무르기 횟수를 모두 썼어요",
		"nothing_to_undo":     "무를 수 있는 내 수가 없어요",
		"request_pending":     "이미 응답을 기다리는 요청이 있어요",
		"no_pending_request":  "응답하거나 취소할 요청이 없어요",
		"draw_offer_disabled": "이 대국에서는 무승부를 제안할 수 없어요",
		"draw_offer_too_soon": "무승부 제안이 거절된 뒤에는 내 수를 3번 더 두어야 다시 제안할 수 있어요",
		"claim_disabled":      "이 대국은 반복과 50수 무승부가 자동으로 처리돼요",
		"not_claimable":       "지금은 무승부를 주장할 수 없어요",
		"rematch_exists":      "이미 재대국이 만들어졌어요",
		"game_not_finished":   "아직 끝나지 않은 대국이에요",
		"request_id_reused":   "같은 requestId로 다른 요청을 보냈어요. 새 요청에는 새 requestId를 써 주세요",
		"game_too_large":      "대국 기록이 너무 길어 더 저장할 수 없어요",
		"no_legal_moves":      "둘 수 있는 수가 없어요",
		"not_started":         "아직 대국이 시작되지 않았어요. 두 사람이 준비하면 3초 뒤에 시작해요",
		"no_ready_step":       "이 대국에는 준비 단계가 없어요",
		// 5xx
		"busy":        "요청이 몰려 처리하지 못했어요. 다시 시도해 주세요",
		"unavailable": "지금은 요청을 처리할 수 없어요. 잠시 후 다시 시도해 주세요",
		"internal":    "서버에 문제가 생겼어요. 잠시 후 다시 시도해 주세요",
	},
	problems: func(e *game.InputError) string {
		f := e.Field
		switch e.Problem {
		case game.ProblemRequired:
			return f + " 항목이 필요해요"
		case game.ProblemUnknown:
			return "알 수 없는 항목이에요: " + f
		case game.ProblemDuplicate:
			return "같은 항목이 두 번 있어요: " + f
		case game.ProblemType:
			return f + " 항목은 " + kindKo[e.Want] + "이어야 해요"
		case game.ProblemOneOf:
			return f + " 항목은 " + strings.Join(e.Allowed, ", ") + " 중 하나여야 해요"
		case game.ProblemRange:
			return fmt.Sprintf("%s 항목은 %d 이상 %d 이하여야 해요", f, e.Min, e.Max)
		case game.ProblemLength:
			return fmt.Sprintf("%s 항목은 %d자 이하의 일반 문자여야 해요", f, e.Max)
		case game.ProblemFormat:
			return f + " 항목의 형식이 맞지 않아요: " + formatKo[e.Want]
		case game.ProblemConflict:
			return f + " 항목은 " + e.Want + " 항목과 함께 쓸 수 없어요"
		case game.ProblemNotAllowed:
			return f + ": " + notAllowedKo[e.Want]
		case game.ProblemNotFound:
			return f + " 항목이 가리키는 대상을 찾을 수 없어요"
		}
		return f + " 항목의 값이 올바르지 않아요"
	},
	syntax: map[string]string{
		whyEmpty:    "요청 본문이 비어 있어요",
		whySyntax:   "요청 본문이 올바른 JSON이 아니에요",
		whyTrailing: "요청 본문 뒤에 다른 내용이 있어요",
		whyNotObj:   "요청 본문은 JSON 객체여야 해요",
		whyTooDeep:  "요청 본문이 너무 깊게 중첩되어 있어요",
	},
	fen: func(err error) string {
		return "FEN이 올바르지 않아요: " + fenProblem(err, fenKo)
	},
	reasons: map[game.Reason]string{
		game.ReasonCheckmate:             "체크메이트",
		game.ReasonResign:                "기권",
		game.ReasonTimeLoss:              "시간 초과",
		game.ReasonStalemate:             "스테일메이트",
		game.ReasonInsufficientMaterial:  "기물 부족",
		game.ReasonThreefold:             "3회 반복",
		game.ReasonFivefold:              "5회 반복",
		game.ReasonFiftyMove:             "50수 규칙",
		game.ReasonSeventyFiveMove:       "75수 규칙",
		game.ReasonDrawAgreed:            "합의",
		game.ReasonTimeoutVsInsufficient: "시간 초과, 상대 기물 부족",
		game.ReasonAborted:               "대국 취소",
		game.ReasonExpired:               "대기 시간 만료",
		game.ReasonCancelled:             "탈퇴로 취소",
	},
	summary: func(winner *chess.Color, reason string, moveCount int) string {
		n := strconv.Itoa(moveCount) + "수"
		switch {
		case winner == nil && (reason == "대국 취소" || reason == "대기 시간 만료" || reason == "탈퇴로 취소"):
			if reason != "대국 취소" {
				return "대국 취소 (" + strings.TrimSuffix(reason, "로 취소") + ", " + n + ")"
			}
			return "대국 취소 (" + n + ")"
		case winner == nil:
			return "무승부 (" + reason + ", " + n + ")"
		case *winner == chess.White:
			return "백 승 (" + reason + ", " + n + ")"
		}
		return "흑 승 (" + reason + ", " + n + ")"
	},
	aiName: func(level string) string {
		names := map[string]string{"easy": "쉬움", "normal": "보통", "hard": "어려움", "max": "최강"}
		return "AI (" + names[level] + ")"
	},
	notification:  notificationsKo,
	deletedPlayer: "탈퇴한 사용자",
}

var kindKo = map[string]string{"string": "문자열", "integer": "정수", "boolean": "true/false", "object": "객체", "array": "배열", "number": "숫자"}

var formatKo = map[string]string{
	"square":      "칸 이름은 a1부터 h8까지예요 (예: e4)",
	"uci":         "UCI 수는 e2e4, e7e8q 같은 형식이어야 해요",
	"san":         "SAN 수 표기가 올바르지 않아요 (예: Nf3, O-O, e8=Q)",
	"move":        "수 표기를 읽을 수 없어요",
	"timeControl": "시간 방식은 '분+초'(1~90분, 0~60초), 'none', 'perMove:30|60|120', 'days:1|2|3|5|7|14' 중 하나예요",
	"requestId":   "128자 이하의 일반 문자여야 해요",
	"gameId":      "대국 ID 형식이 아니에요",
	"cursor":      "이전 응답의 nextCursor 값을 그대로 보내 주세요",

	// Devices and notifications (SPEC §16.3).
	"apnsToken":      "APNs 기기 토큰은 16진수 64자예요",
	"fcmToken":       "FCM 등록 토큰은 영문, 숫자와 _ : - 로 된 100~4096자예요",
	"notificationId": "알림 목록의 notificationId 값을 그대로 보내 주세요",
}

var notAllowedKo = map[string]string{
	"levelForHuman":      "사람 상대에는 level을 쓸 수 없어요",
	"timeoutIsSystem":    "timeout은 서버만 보낼 수 있어요",
	"oneMoveForm":        "from·to, uci, san 중 한 가지 형식만 보내 주세요",
	"rematchNotPlayer":   "원래 대국의 참가자만 재대국을 만들 수 있어요",
	"notForActionType":   "이 동작에는 쓰지 않는 항목이에요",
	"empty":              "비어 있으면 안 돼요",
	"rematchNotFinished": "끝난 대국에만 재대국을 만들 수 있어요",
	"ratedRoom":          "레이팅 방에서는 AI와 둘 수 없어요",
	"inviteForAI":        "AI 상대에는 초대를 쓸 수 없어요",
	"roomOutsideOptions": "방은 options 밖의 room 항목으로 정해요",
	"reservedName":       "시스템이 쓰는 이름이라 쓸 수 없어요",
	"blockSelf":          "자기 자신은 차단할 수 없어요",
	"ratedRoomRules":     "레이팅 방은 여울 규칙(rules: yeoul)으로만 둬요",
	"correspondenceRoom": "며칠씩 두는 대국(days)은 자유 대국실에서만 둘 수 있어요",
	"yeoulNoDrawOffer":   "여울 규칙에는 무승부 제안이 없어요",
	"yeoulNoUndo":        "여울 규칙에는 무르기가 없어요 (off만 쓸 수 있어요)",
	"yeoulAutoDraws":     "여울 규칙은 반복과 50수 무승부를 자동으로 처리해요 (auto만 쓸 수 있어요)",
	"yeoulGrace":         "여울 규칙의 재접속 시간은 90초로 정해져 있어요",
}

var fenKo = map[error]string{
	chess.ErrKingCount:         "킹은 양쪽에 하나씩 있어야 해요",
	chess.ErrPawnOnBackRank:    "폰은 1행이나 8행에 있을 수 없어요",
	chess.ErrTooManyPieces:     "한쪽 기물이 16개를 넘어요",
	chess.ErrTooManyPawns:      "한쪽 폰이 8개를 넘어요",
	chess.ErrOpponentInCheck:   "차례가 아닌 쪽의 킹이 체크 상태예요",
	chess.ErrImpossibleCheck:   "체크하는 기물이 너무 많아요",
	chess.ErrCastlingRights:    "캐슬링 권리에 맞는 킹·룩이 제자리에 없어요",
	chess.ErrChess960Castling:  "이 캐슬링 권리는 chess960에서만 가능해요",
	chess.ErrEnPassantSquare:   "앙파상 칸이 불가능한 칸이에요",
	chess.ErrMoveCounterSyntax: "수 카운터가 올바른 숫자가 아니에요",
	nil:                        "형식이 맞지 않아요",
}

var english = texts{
	codes: map[string]string{
		"invalid_json":           "The request body is not a valid JSON object",
		"missing_field":          "A required field is missing",
		"unknown_field":          "Unknown field",
		"duplicate_field":        "The same field appears twice",
		"invalid_field":          "Invalid value",
		"invalid_fen":            "Invalid FEN",
		"invalid_body":           "The request body cannot be read",
		"invalid_path":           "The request path cannot be read",
		"unauthorized":           "A seat token is required (Authorization: Bearer <token>)",
		"invalid_token":          "The token is malformed, revoked or unknown (Authorization: Bearer <token>)",
		"invalid_api_key":        "The API key is missing or invalid",
		"forbidden":              "This token is not a seat of this game",
		"player_required":        "A player token is required (create one with POST /v1/players)",
		"invite_required":        "This game can only be joined with its invite code",
		"rating_out_of_range":    "Your rating is outside this room's range",
		"link_code_invalid":      "The link code is unknown, already used or expired",
		"recovery_code_invalid":  "The recovery code is wrong",
		"player_not_found":       "Player not found",
		"session_not_found":      "Session not found",
		"blocked":                "One of you has blocked the other, so you cannot play together",
		"too_many_blocks":        "You cannot block more players (500 at most)",
		"game_not_found":         "Game not found",
		"not_found":              "No such route",
		"method_not_allowed":     "Method not allowed on this route",
		"version_conflict":       "The game changed in the meantime; check its current state",
		"body_too_large":         "The request body is too large (64 KB at most)",
		"rate_limited":           "Too many requests; try again later",
		"too_many_subscriptions": "One connection can follow at most 10 games",
		"too_many_devices":       "At most 10 devices can be registered; delete one you no longer use",
		"device_not_found":       "No such registered device",
		"notification_not_found": "No such notification",
		"platform_unavailable":   "This service cannot send notifications to that platform",
		"not_your_turn":          "It is your opponent's turn",
		"illegal_move":           "That piece cannot move like that",
		"king_in_check":          "That move would leave your king in check",
		"promotion_required":     "Choose a piece to promote to",
		"ambiguous_move":         "It is unclear which piece should move; give its square too",
		"game_not_playing":       "The game is not in progress",
		"game_full":              "Both seats are already taken",
		"game_not_waiting":       "This game is not waiting for an opponent",
		"already_seated":         "You already have a seat in this game",
		"time_expired":           "Your time is up",
		"undo_disabled":          "Take-backs are off in this game",
		"undo_limit":             "You have used all your take-backs",
		"nothing_to_undo":        "You have no move to take back",
		"request_pending":        "A request is already waiting for an answer",
		"no_pending_request":     "There is no request to answer or cancel",
		"draw_offer_disabled":    "Draw offers are off in this game",
		"draw_offer_too_soon":    "After a declined draw offer, make three more moves before offering again",
		"claim_disabled":         "Repetition and the 50-move rule end this game automatically",
		"not_claimable":          "You cannot claim a draw now",
		"rematch_exists":         "A rematch of this game already exists",
		"game_not_finished":      "The game is not finished yet",
		"request_id_reused":      "This requestId was already used for a different request; use a new requestId",
		"game_too_large":         "The game record is too long to store any more moves",
		"no_legal_moves":         "There is no legal move",
		"not_started":            "The game has not started yet; it starts 3 seconds after both players are ready",
		"no_ready_step":          "This game has no ready step",
		"busy":                   "Too many concurrent changes; please retry",
		"unavailable":            "The service cannot handle the request right now; try again later",
		"internal":               "Something went wrong on our side; try again later",
	},
	problems: func(e *game.InputError) string {
		f := e.Field
		switch e.Problem {
		case game.ProblemRequired:
			return f + " is required"
		case game.ProblemUnknown:
			return "Unknown field: " + f
		case game.ProblemDuplicate:
			return "Duplicate field: " + f
		case game.ProblemType:
			return f + " must be " + article(e.Want)
		case game.ProblemOneOf:
			return f + " must be one of " + strings.Join(e.Allowed, ", ")
		case game.ProblemRange:
			return fmt.Sprintf("%s must be between %d and %d", f, e.Min, e.Max)
		case game.ProblemLength:
			return fmt.Sprintf("%s must be plain text of at most %d characters", f, e.Max)
		case game.ProblemFormat:
			return f + " has the wrong format: " + formatEn[e.Want]
		case game.ProblemConflict:
			return f + " cannot be used together with " + e.Want
		case game.ProblemNotAllowed:
			return f + ": " + notAllowedEn[e.Want]
		case game.ProblemNotFound:
			return f + " refers to something that does not exist"
		}
		return f + " has an invalid value"
	},
	syntax: map[string]string{
		whyEmpty:    "The request body is empty",
		whySyntax:   "The request body is not valid JSON",
		whyTrailing: "There is more after the JSON value of the request body",
		whyNotObj:   "The request body must be a JSON object",
		whyTooDeep:  "The request body is nested too deeply",
	},
	fen: func(err error) string {
		return "Invalid FEN: " + fenProblem(err, fenEn)
	},
	reasons: map[game.Reason]string{
		game.ReasonCheckmate:             "checkmate",
		game.ReasonResign:                "resignation",
		game.ReasonTimeLoss:              "time",
		game.ReasonStalemate:             "stalemate",
		game.ReasonInsufficientMaterial:  "insufficient material",
		game.ReasonThreefold:             "threefold repetition",
		game.ReasonFivefold:              "fivefold repetition",
		game.ReasonFiftyMove:             "50-move rule",
		game.ReasonSeventyFiveMove:       "75-move rule",
		game.ReasonDrawAgreed:            "agreement",
		game.ReasonTimeoutVsInsufficient: "time, opponent cannot mate",
		game.ReasonAborted:               "aborted",
		game.ReasonExpired:               "expired",
		game.ReasonCancelled:             "cancelled",
	},
	summary: func(winner *chess.Color, reason string, moveCount int) string {
		n := strconv.Itoa(moveCount) + " moves"
		if moveCount == 1 {
			n = "1 move"
		}
		switch {
		case winner == nil && reason == "aborted":
			return "Game aborted (" + n + ")"
		case winner == nil && reason == "expired":
			return "Game aborted (nobody joined in time, " + n + ")"
		case winner == nil && reason == "cancelled":
			return "Game cancelled (the player left, " + n + ")"
		case winner == nil:
			return "Draw (" + reason + ", " + n + ")"
		case *winner == chess.White:
			return "White won (" + reason + ", " + n + ")"
		}
		return "Black won (" + reason + ", " + n + ")"
	},
	aiName:        func(level string) string { return "AI (" + level + ")" },
	notification:  notificationsEn,
	deletedPlayer: game.DeletedPlayerName,
}

func article(kind string) string {
	switch kind {
	case "integer", "object", "array":
		return "an " + kind
	}
	return "a " + kind
}

var formatEn = map[string]string{
	"square":      "squares are a1 to h8 (for example e4)",
	"uci":         "UCI moves look like e2e4 or e7e8q",
	"san":         "not a SAN move (for example Nf3, O-O, e8=Q)",
	"move":        "the move text cannot be read",
	"timeControl": "time controls are 'M+S' (1-90 minutes, 0-60 seconds), 'none', 'perMove:30|60|120' or 'days:1|2|3|5|7|14'",
	"requestId":   "at most 128 characters of plain text",
	"gameId":      "not a game id",
	"cursor":      "send the nextCursor of the previous answer as it is",

	// Devices and notifications (SPEC §16.3).
	"apnsToken":      "an APNs device token is 64 hexadecimal characters",
	"fcmToken":       "an FCM registration token is 100 to 4096 letters, digits, _, : and -",
	"notificationId": "send a notificationId of the notification list as it is",
}

var notAllowedEn = map[string]string{
	"levelForHuman":      "a human opponent has no level",
	"timeoutIsSystem":    "only the server sends timeouts",
	"oneMoveForm":        "send the move in one form only: from/to, uci or san",
	"rematchNotPlayer":   "only the players of the original game can start its rematch",
	"notForActionType":   "this field is not used by this action type",
	"empty":              "must not be empty",
	"rematchNotFinished": "only a finished game can have a rematch",
	"ratedRoom":          "rated rooms are for two players, not the AI",
	"inviteForAI":        "an AI opponent takes no invite",
	"roomOutsideOptions": "the room is given by the top-level room field",
	"reservedName":       "this name is reserved for the system",
	"blockSelf":          "you cannot block yourself",
	"ratedRoomRules":     "rated rooms play the yeoul rules (rules: yeoul) only",
	"correspondenceRoom": "correspondence games (days) are for the free room only",
	"yeoulNoDrawOffer":   "the yeoul rules have no draw offers",
	"yeoulNoUndo":        "the yeoul rules have no take-backs (only off)",
	"yeoulAutoDraws":     "the yeoul rules draw repetitions and 50 moves automatically (only auto)",
	"yeoulGrace":         "the yeoul rules' reconnection time is fixed at 90 seconds",
}

var fenEn = map[error]string{
	chess.ErrKingCount:         "each side needs exactly one king",
	chess.ErrPawnOnBackRank:    "pawns cannot stand on the first or last rank",
	chess.ErrTooManyPieces:     "a side has more than 16 pieces",
	chess.ErrTooManyPawns:      "a side has more than 8 pawns",
	chess.ErrOpponentInCheck:   "the side not to move is in check",
	chess.ErrImpossibleCheck:   "too many pieces give check",
	chess.ErrCastlingRights:    "a castling right has no king and rook in place",
	chess.ErrChess960Castling:  "this castling right exists only in chess960",
	chess.ErrEnPassantSquare:   "impossible en-passant square",
	chess.ErrMoveCounterSyntax: "the move counters are not valid numbers",
	nil:                        "malformed",
}

// fenProblem words a FEN parse error with the given table.
func fenProblem(err error, words map[error]string) string {
	for sentinel, text := range words {
		if sentinel != nil && errors.Is(err, sentinel) {
			return text
		}
	}
	var fe *chess.FENError
	if errors.As(err, &fe) && fe.Field != "" {
		return fe.Field + ": " + words[nil]
	}
	return words[nil]
}
