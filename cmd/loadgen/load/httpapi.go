package load

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// view is the part of a game view the players read. Decoding skips the
// rest (the view of a long game is tens of KB).
type view struct {
	GameID  string `json:"gameId"`
	Version int64  `json:"version"`
	Phase   string `json:"phase"`
	Turn    string `json:"turn"`
	You     string `json:"you"`
	Moves   []struct {
		Color string `json:"color"`
		At    int64  `json:"at"`
	} `json:"moves"`
	LegalMoves []struct {
		UCI string `json:"uci"`
	} `json:"legalMoves"`
}

const (
	phasePlaying  = "playing"
	phaseFinished = "finished"
)

// lastMoveBy reports whether the view's last move was color's, with its
// stamp.
func (v *view) lastMoveBy(color string) (stampMs int64, ok bool) {
	if n := len(v.Moves); n > 0 && v.Moves[n-1].Color == color {
		return v.Moves[n-1].At, true
	}
	return 0, false
}

// requestError is an HTTP request that failed; key() groups them in the
// error counts by what, status and error code.
type requestError struct {
	what   string
	status int
	code   string
	err    error
}

func (e *requestError) Error() string {
	if e.err != nil {
		return e.what + ": " + e.err.Error()
	}
	return fmt.Sprintf("%s: %d %s", e.what, e.status, e.code)
}

func (e *requestError) Unwrap() error { return e.err }

func (e *requestError) key() string {
	if e.err != nil {
		return e.what + " " + transportKind(e.err)
	}
	return strings.TrimSpace(fmt.Sprintf("%s %d %s", e.what, e.status, e.code))
}

// httpAPI sends the API's requests.
type httpAPI struct {
	base   string
	client *http.Client
	// answersWithoutMoves sends moves with ?moves=false: the answer is the
	// view without its move list.
	answersWithoutMoves bool
}

// maxAnswer bounds an answer read (a view of a very long game is under
// 1 MB).
const maxAnswer = 4 << 20

// exchange is one request's times: sent just before the request is handed
// to the transport, arrived when the whole answer has been read (before it
// is decoded, as a stream message is timed).
type exchange struct {
	sent, arrived time.Time
}

// do sends a request and decodes a 2xx answer into out; any other answer
// is a requestError with the API's error code.
func (h *httpAPI) do(ctx context.Context, what, method, path, token string, body, out any) (exchange, error) {
	var x exchange
	var rd io.Reader
	if body != nil {
		data, err := json.Marshal(body)
		if err != nil {
			return x, &requestError{what: what, err: err}
		}
		rd = bytes.NewReader(data)
	}
	req, err := http.NewRequestWithContext(ctx, method, h.base+path, rd)
	if err != nil {
		return x, &requestError{what: what, err: err}
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	x.sent = time.Now()
	res, err := h.client.Do(req)
	if err != nil {
		return x, &requestError{what: what, err: err}
	}
	defer res.Body.Close()
	data, err := io.ReadAll(io.LimitReader(res.Body, maxAnswer))
	x.arrived = time.Now()
	if err != nil {
		return x, &requestError{what: what, err: fmt.Errorf("answer: %w", err)}
	}
	if res.StatusCode/100 != 2 {
		var e struct {
			Error struct {
				Code string `json:"code"`
			} `json:"error"`
		}
		_ = json.Unmarshal(data, &e)
		return x, &requestError{what: what, status: res.StatusCode, code: e.Error.Code}
	}
	if out == nil {
		return x, nil
	}
	if err := json.Unmarshal(data, out); err != nil {
		return x, &requestError{what: what, err: fmt.Errorf("answer: %w", err)}
	}
	return x, nil
}

func (h *httpAPI) health(ctx context.Context) error {
	_, err := h.do(ctx, "health", "GET", "/v1/health", "", nil, nil)
	return err
}

// newGame creates a game without a clock and joins it; it returns its id
// and the seat tokens by colour.
func (h *httpAPI) newGame(ctx context.Context) (string, map[string]string, error) {
	var created struct {
		GameID string `json:"gameId"`
		Token  string `json:"token"`
	}
	if _, err := h.do(ctx, "create", "POST", "/v1/games", "", map[string]any{"options": map[string]any{"timeControl": "none"}}, &created); err != nil {
		return "", nil, err
	}
	var joined struct {
		Token string `json:"token"`
		Game  view   `json:"game"`
	}
	if _, err := h.do(ctx, "join", "POST", "/v1/games/"+created.GameID+"/join", "", nil, &joined); err != nil {
		return "", nil, err
	}
	if joined.Game.You != "white" && joined.Game.You != "black" {
		return "", nil, &requestError{what: "join", err: fmt.Errorf("answer names no seat (you %q)", joined.Game.You)}
	}
	tokens := map[string]string{joined.Game.You: joined.Token, opponent(joined.Game.You): created.Token}
	return created.GameID, tokens, nil
}

// view reads the game as token's seat sees it; with afterVersion it is the
// long poll, answering when the game is newer than *afterVersion (or after
// the server's maximum wait).
func (h *httpAPI) view(ctx context.Context, id, token string, afterVersion *int64) (*view, exchange, error) {
	path, what := "/v1/games/"+id, "view"
	if afterVersion != nil {
		path += "?afterVersion=" + strconv.FormatInt(*afterVersion, 10)
		what = "poll"
	}
	var ans struct {
		Game view `json:"game"`
	}
	x, err := h.do(ctx, what, "GET", path, token, nil, &ans)
	if err != nil {
		return nil, x, err
	}
	return &ans.Game, x, nil
}

// move sends a move and returns the mover's view after it.
func (h *httpAPI) move(ctx context.Context, id, token, uci string) (*view, exchange, error) {
	var ans struct {
		Game view `json:"game"`
	}
	body := map[string]any{"type": "move", "payload": map[string]any{"uci": uci}}
	path := "/v1/games/" + id + "/actions"
	if h.answersWithoutMoves {
		path += "?moves=false"
	}
	x, err := h.do(ctx, "move", "POST", path, token, body, &ans)
	if err != nil {
		return nil, x, err
	}
	return &ans.Game, x, nil
}

// transportKind names a request's failure without its details (which
// name the game and the port) so that the error counts group.
func transportKind(err error) string {
	var ne net.Error
	switch {
	case errors.Is(err, context.DeadlineExceeded), errors.As(err, &ne) && ne.Timeout():
		return "timeout"
	case errors.Is(err, syscall.ECONNREFUSED):
		return "refused"
	case errors.Is(err, syscall.ECONNRESET), errors.Is(err, io.EOF), errors.Is(err, io.ErrUnexpectedEOF):
		return "connection reset"
	case strings.HasPrefix(err.Error(), "answer: "):
		return "bad answer"
	}
	return "transport"
}

func opponent(color string) string {
	if color == "white" {
		return "black"
	}
	return "white"
}
