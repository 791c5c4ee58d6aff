package lambdafn

import (
	"crypto/subtle"
	"encoding/json"
	"net/http"

	"github.com/aws/aws-lambda-go/events"

	"chessapi/shared/api"
)

// The optional edge (template.yaml's Edge parameter): CloudFront adds
// OriginVerifyHeader, carrying ORIGIN_VERIFY_SECRET, to every request it
// sends the APIs; a function given the secret refuses (403) an HTTP
// request or a WebSocket $connect without it. So a client that goes around
// CloudFront (and its web ACL) to the execute-api address is refused even
// while that address is enabled — only custom domains let it be disabled.

// OriginVerifyHeader is the header CloudFront adds (template.yaml's
// distributions' OriginCustomHeaders).
const OriginVerifyHeader = "x-origin-verify"

// EnvOriginVerifySecret is the secret the edge adds: set, every request
// must carry it (move, ai, stream; the template sets it from the
// OriginVerifySecret parameter when Edge is on).
const EnvOriginVerifySecret = "ORIGIN_VERIFY_SECRET"

// fromTheEdge reports whether a request's headers carry the edge's secret
// (always true when the function has none).
func (a *App) fromTheEdge(headers map[string]string) bool {
	if a.originSecret == "" {
		return true
	}
	got := header(headers, OriginVerifyHeader)
	return subtle.ConstantTimeCompare([]byte(got), []byte(a.originSecret)) == 1
}

// notThroughTheEdge is the answer to a request that went around the edge:
// 403 forbidden, in the request's language.
func notThroughTheEdge(acceptLanguage string) (int, string, string) {
	lang := api.NegotiateLang(acceptLanguage)
	message := "이 주소로는 요청을 받지 않아요. 서비스 주소로 보내 주세요"
	if lang == api.English {
		message = "This address takes no requests: use the service's address"
	}
	body, _ := json.Marshal(map[string]any{"error": map[string]string{"code": "forbidden", "message": message}})
	return http.StatusForbidden, string(body), lang.String()
}

// edgeRefusal is notThroughTheEdge as an HTTP API response.
func edgeRefusal(ev events.APIGatewayV2HTTPRequest) events.APIGatewayV2HTTPResponse {
	status, body, lang := notThroughTheEdge(header(ev.Headers, "accept-language"))
	return events.APIGatewayV2HTTPResponse{
		StatusCode: status,
		Headers:    map[string]string{"Content-Type": "application/json; charset=utf-8", "Cache-Control": "no-store", "Content-Language": lang},
		Body:       body,
	}
}
