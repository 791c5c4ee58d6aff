package streamtest

import (
	"bufio"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"time"
)

// The long game of shared/store/dynamostore's size figures (issue 15): a
// 1,000-ply game written by engine self-play, with think times, draw
// offers, take-back requests and disconnections along the way, played
// under the default options (10+5, automatic draws, one take-back) with
// the host as White. The stream's tests follow its first plies.

// ScriptLine is one scripted action: which seat (w or b), after how long,
// what ("move", "offerDraw", "cancelOffer", "respondDraw", "requestUndo",
// "respondUndo", "connect", "disconnect") and its argument (a UCI move,
// accept or decline).
type ScriptLine struct {
	Seat  string
	Delay time.Duration
	Verb  string
	Arg   string
}

// Body is the action's request body for POST /v1/games/{id}/actions, or
// for POST .../presence when presence is true.
func (l ScriptLine) Body() (body map[string]any, presence bool) {
	switch l.Verb {
	case "connect", "disconnect":
		return map[string]any{"connected": l.Verb == "connect"}, true
	case "move":
		return map[string]any{"type": "move", "payload": map[string]any{"uci": l.Arg}}, false
	case "respondDraw", "respondUndo":
		return map[string]any{"type": l.Verb, "payload": map[string]any{"accept": l.Arg == "accept"}}, false
	}
	return map[string]any{"type": l.Verb}, false
}

// LongGame reads the script.
func LongGame() ([]ScriptLine, error) {
	_, self, _, ok := runtime.Caller(0)
	if !ok {
		return nil, fmt.Errorf("streamtest: no source path")
	}
	path := filepath.Join(filepath.Dir(self), "..", "..", "store", "dynamostore", "testdata", "longgame.txt")
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var out []ScriptLine
	sc := bufio.NewScanner(f)
	for n := 1; sc.Scan(); n++ {
		text := sc.Text()
		if text == "" || strings.HasPrefix(text, "#") {
			continue
		}
		fields := strings.Fields(text)
		if len(fields) < 3 || len(fields) > 4 || (fields[0] != "w" && fields[0] != "b") {
			return nil, fmt.Errorf("%s:%d: %q is not <w|b> <delay ms> <action> [arg]", path, n, text)
		}
		ms, err := strconv.ParseInt(fields[1], 10, 64)
		if err != nil || ms < 0 {
			return nil, fmt.Errorf("%s:%d: delay %q", path, n, fields[1])
		}
		l := ScriptLine{Seat: fields[0], Delay: time.Duration(ms) * time.Millisecond, Verb: fields[2]}
		if len(fields) == 4 {
			l.Arg = fields[3]
		}
		out = append(out, l)
	}
	return out, sc.Err()
}
