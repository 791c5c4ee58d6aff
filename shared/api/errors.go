package api

import (
	"encoding/json"
	"net/http"
)

// apiError is an error the API answers with: the status code and the JSON
// body {"error":{"code","message","field"?}} (plus extra top-level members
// such as the current game on 409). The message is for people (Korean, as
// the rest of the product); code and field are for programs.
type apiError struct {
	Status  int
	Code    string
	Message string
	Field   string
	Extra   map[string]any // extra top-level members of the response body
}

func (e *apiError) Error() string { return e.Code + ": " + e.Message }

func errBadRequest(code, field, message string) *apiError {
	return &apiError{Status: http.StatusBadRequest, Code: code, Field: field, Message: message}
}

var (
	errBodyTooLarge = &apiError{Status: http.StatusRequestEntityTooLarge, Code: "body_too_large",
		Message: "요청 본문이 너무 커요 (최대 64KB)"}
	errNotFoundRoute = &apiError{Status: http.StatusNotFound, Code: "not_found",
		Message: "없는 주소예요"}
	errMethodNotAllowed = &apiError{Status: http.StatusMethodNotAllowed, Code: "method_not_allowed",
		Message: "이 주소에서 쓸 수 없는 메서드예요"}
	errInternal = &apiError{Status: http.StatusInternalServerError, Code: "internal",
		Message: "서버에 문제가 생겼어요. 잠시 후 다시 시도해 주세요"}
	errUnavailable = &apiError{Status: http.StatusServiceUnavailable, Code: "unavailable",
		Message: "지금은 요청을 처리할 수 없어요. 잠시 후 다시 시도해 주세요"}
	errBadAPIKey = &apiError{Status: http.StatusUnauthorized, Code: "invalid_api_key",
		Message: "API 키가 없거나 올바르지 않아요"}
)

type errorBody struct {
	Code    string `json:"code"`
	Message string `json:"message"`
	Field   string `json:"field,omitempty"`
}

// writeJSON writes v as the JSON response body with the given status.
func writeJSON(w http.ResponseWriter, status int, v any) {
	body, err := json.Marshal(v)
	if err != nil {
		status = http.StatusInternalServerError
		body = []byte(`{"error":{"code":"internal","message":"응답을 만들 수 없어요"}}`)
	}
	h := w.Header()
	h.Set("Content-Type", "application/json; charset=utf-8")
	h.Set("Cache-Control", "no-store")
	w.WriteHeader(status)
	_, _ = w.Write(body)
}

func writeAPIError(w http.ResponseWriter, e *apiError) {
	body := map[string]any{"error": errorBody{Code: e.Code, Message: e.Message, Field: e.Field}}
	for k, v := range e.Extra {
		body[k] = v
	}
	writeJSON(w, e.Status, body)
}
