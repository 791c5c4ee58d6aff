package api

import (
	"encoding/json"

	"chessapi/shared/game"
)

// localize fills the human texts of a view for language l: the result's
// summaries (summaryKo always Korean, summary in l) and AI seats' names. It
// returns a copy; the service's view is not modified (views are shared by
// the subscribers of a game).
func localize(v *game.View, l Lang) *game.View {
	if v == nil {
		return nil
	}
	out := *v
	for c, p := range v.Players {
		switch {
		case p != nil && p.AI != nil:
			named := *p
			named.Name = l.AIName(*p.AI)
			out.Players[c] = &named
		case p != nil && p.Name == game.DeletedPlayerName:
			named := *p
			named.Name = l.DeletedPlayerName()
			out.Players[c] = &named
		}
	}
	if r := v.Result; r != nil {
		res := *r
		res.SummaryKo = Korean.Summary(r.Winner, r.Reason, r.MoveCount)
		res.Summary = l.Summary(r.Winner, r.Reason, r.MoveCount)
		out.Result = &res
	}
	return &out
}

// localizeDelta fills the human texts of a delta for language l, as
// localize does for a view: the players' field (AI names) and the
// result's (summaries). The delta is a copy; d is not modified.
func localizeDelta(d game.Delta, l Lang) game.Delta {
	out := make(game.Delta, len(d))
	copy(out, d)
	for i, f := range out {
		switch f.Key {
		case "players":
			var players game.PerColor[*game.PlayerView]
			if json.Unmarshal(f.Value, &players) != nil {
				continue
			}
			v := localize(&game.View{Players: players}, l)
			if js, err := json.Marshal(v.Players); err == nil {
				out[i].Value = js
			}
		case "result":
			var r *game.ResultView
			if json.Unmarshal(f.Value, &r) != nil || r == nil {
				continue
			}
			v := localize(&game.View{Result: r}, l)
			if js, err := json.Marshal(v.Result); err == nil {
				out[i].Value = js
			}
		}
	}
	return out
}
