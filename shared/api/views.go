package api

import (
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
