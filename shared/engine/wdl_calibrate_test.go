package engine

import (
	"bufio"
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"strconv"
	"strings"
	"testing"

	"chessapi/shared/chess"
)

// The WDL model's coefficients (wdl.go) come from this calibration: the
// engine plays itself from randomised openings at a fixed node budget, every
// position's search score is recorded with its material and the game's
// outcome for the side to move, and the model is fitted by maximum
// likelihood. It is a tool, not a check, so it runs only when asked:
//
//	ENGINE_WDLFIT=400 ENGINE_WDLFIT_DATA=/tmp/wdl.csv go test -run TestWDLCalibration -v -timeout 3h ./shared/engine
//
// ENGINE_WDLFIT is the number of games; ENGINE_WDLFIT_DATA (optional) keeps
// the samples, and a later run with the same path fits them again without
// playing. Everything is seeded and the searches are bounded by nodes, so a
// run replays exactly for a given engine.

const (
	wdlFitNodes          = 20000 // nodes per move of the calibration games
	wdlFitRandomPlies    = 8     // random opening plies (4..8)
	wdlFitFirstSamplePly = 16    // plies before this are not sampled
	wdlFitMaxPlies       = 400   // a longer game is scored a draw
)

// wdlSample is one position of a calibration game.
type wdlSample struct {
	cp       int // search score, side to move
	material int // wdlMaterial of the position
	result   int // +1 the side to move won, 0 draw, -1 lost
}

func TestWDLCalibration(t *testing.T) {
	games, _ := strconv.Atoi(os.Getenv("ENGINE_WDLFIT"))
	if games <= 0 {
		t.Skip("calibration tool: set ENGINE_WDLFIT=<games> (docs/engine.md)")
	}
	path := os.Getenv("ENGINE_WDLFIT_DATA")
	samples, err := readWDLSamples(path)
	if err != nil {
		samples = nil
		rng := rand.New(rand.NewPCG(2024, 11))
		e := New(Options{HashMB: 16})
		var w, d, l, long int
		for g := range games {
			s, res, plies := playCalibrationGame(e, rng)
			samples = append(samples, s...)
			switch {
			case plies >= wdlFitMaxPlies:
				long++
			case res > 0:
				w++
			case res < 0:
				l++
			default:
				d++
			}
			if (g+1)%50 == 0 {
				t.Logf("%d games: white %d, draws %d, black %d, cut at %d plies %d; %d samples", g+1, w, d, l, wdlFitMaxPlies, long, len(samples))
			}
		}
		if path != "" {
			if err := writeWDLSamples(path, samples); err != nil {
				t.Fatal(err)
			}
		}
	}
	t.Logf("%d samples", len(samples))

	// Per material bucket, to see the shape a and b must follow.
	for lo := 10; lo < 80; lo += 10 {
		var bucket []wdlSample
		for _, s := range samples {
			if s.material >= lo && s.material < lo+10 {
				bucket = append(bucket, s)
			}
		}
		if len(bucket) < 500 {
			continue
		}
		p := nelderMead(func(p []float64) float64 {
			return wdlNLL(bucket, func(int) (float64, float64) { return p[0], p[1] })
		}, []float64{100, 80}, 20)
		t.Logf("material %2d-%2d: %6d samples a %6.1f b %6.1f", lo, lo+9, len(bucket), p[0], p[1])
	}

	// The shipped shape against one a and b for all material, fitted on the
	// first half of the games and scored on the second.
	half := samples[:len(samples)/2]
	rest := samples[len(samples)/2:]
	constant := func(p []float64) func(int) (float64, float64) {
		return func(int) (float64, float64) { return p[0], p[1] }
	}
	pc := nelderMead(func(p []float64) float64 { return wdlNLL(half, constant(p)) }, []float64{100, 100}, 20)
	ph := fitWDL(half)
	t.Logf("held out (mean log-loss on the second half): model %.4f, constant a and b %.4f, outcome rates alone %.4f",
		wdlNLL(rest, wdlModel(ph))/float64(len(rest)), wdlNLL(rest, constant(pc))/float64(len(rest)),
		baselineNLL(rest)/float64(len(rest)))

	p := fitWDL(samples)
	t.Logf("fit: wdlA0 = %.1f wdlA1 = %.1f wdlA2 = %.1f wdlB = %.1f", p[0], p[1], p[2], p[3])
	t.Logf("mean log-loss per sample: shipped %.4f, fitted %.4f, outcome rates alone %.4f",
		wdlNLL(samples, wdlParams)/float64(len(samples)), wdlNLL(samples, wdlModel(p))/float64(len(samples)),
		baselineNLL(samples)/float64(len(samples)))

	// Observed against predicted (shipped model) by score.
	type tally struct{ n, w, d, l, pw, pd, pl float64 }
	var byScore [13]tally
	for _, s := range samples {
		k := &byScore[(min(max(s.cp, -650), 649)+650)/100]
		a, b := wdlParams(s.material)
		cp := float64(min(max(s.cp, -wdlScoreClamp), wdlScoreClamp))
		pw, pl := 1/(1+math.Exp((a-cp)/b)), 1/(1+math.Exp((a+cp)/b))
		k.n++
		k.pw, k.pd, k.pl = k.pw+pw, k.pd+1-pw-pl, k.pl+pl
		switch s.result {
		case 1:
			k.w++
		case -1:
			k.l++
		default:
			k.d++
		}
	}
	for i, k := range byScore {
		if k.n == 0 {
			continue
		}
		label := fmt.Sprintf("%+5d..%+5d", i*100-650, i*100-551)
		switch i {
		case 0:
			label = "      ..-551"
		case len(byScore) - 1:
			label = "+550..     "
		}
		t.Logf("cp %s: %6.0f samples, observed %3.0f/%3.0f/%3.0f, predicted %3.0f/%3.0f/%3.0f",
			label, k.n, 1000*k.w/k.n, 1000*k.d/k.n, 1000*k.l/k.n, 1000*k.pw/k.n, 1000*k.pd/k.n, 1000*k.pl/k.n)
	}
}

// playCalibrationGame plays one self-play game and returns its samples, the
// result for White and its length in plies.
func playCalibrationGame(e *Engine, rng *rand.Rand) ([]wdlSample, int, int) {
	e.NewGame()
	pos := chess.StartingPosition()
	var hist []uint64
	var list chess.MoveList
	for range 4 + rng.IntN(wdlFitRandomPlies-3) {
		pos.GenerateMoves(&list, chess.GenAll)
		if list.Len() == 0 {
			break
		}
		hist = append(hist, pos.Hash())
		pos.Play(list.At(rng.IntN(list.Len())))
	}
	type rec struct {
		s     wdlSample
		white bool
	}
	var recs []rec
	resultWhite := 0
	for ply := len(hist); ; ply++ {
		if ply >= wdlFitMaxPlies || pos.HalfmoveClock() >= 100 || repeatedThrice(pos.Hash(), hist) {
			break
		}
		st := pos.Status()
		if st == chess.StatusCheckmate {
			resultWhite = 1
			if pos.Turn() == chess.White {
				resultWhite = -1
			}
			break
		}
		if st != chess.StatusPlaying {
			break
		}
		res, err := e.Search(context.Background(), Params{Position: pos, History: hist, Nodes: wdlFitNodes})
		if err != nil {
			panic(err) // the position has a legal move
		}
		if ply >= wdlFitFirstSamplePly && !res.Score.IsMate() {
			recs = append(recs, rec{wdlSample{cp: res.Score.CP, material: wdlMaterial(pos)}, pos.Turn() == chess.White})
		}
		hist = append(hist, pos.Hash())
		pos.Play(res.BestMove)
	}
	out := make([]wdlSample, len(recs))
	for i, r := range recs {
		out[i] = r.s
		out[i].result = resultWhite
		if !r.white {
			out[i].result = -resultWhite
		}
	}
	return out, resultWhite, len(hist)
}

// repeatedThrice reports whether h occurred twice before in hist.
func repeatedThrice(h uint64, hist []uint64) bool {
	n := 0
	for _, x := range hist {
		if x == h {
			n++
		}
	}
	return n >= 2
}

// fitWDL fits wdlA0, wdlA1, wdlA2 and wdlB by maximum likelihood.
func fitWDL(samples []wdlSample) []float64 {
	return nelderMead(func(p []float64) float64 { return wdlNLL(samples, wdlModel(p)) },
		[]float64{200, -100, 0, 100}, 20)
}

// wdlModel is the model of wdl.go with coefficients p (a0, a1, a2, b).
func wdlModel(p []float64) func(int) (float64, float64) {
	return func(m int) (float64, float64) {
		t := wdlPhase(m)
		return p[0] + (p[1]+p[2]*t)*t, p[3]
	}
}

// wdlNLL is the negative log-likelihood of the samples' outcomes under the
// model whose a and b for material m are given by params.
func wdlNLL(samples []wdlSample, params func(m int) (a, b float64)) float64 {
	const eps = 1e-9
	var nll float64
	for _, s := range samples {
		a, b := params(s.material)
		if b <= 1 || a <= 0 {
			return math.Inf(1)
		}
		cp := float64(min(max(s.cp, -wdlScoreClamp), wdlScoreClamp))
		w := 1 / (1 + math.Exp((a-cp)/b))
		l := 1 / (1 + math.Exp((a+cp)/b))
		p := 1 - w - l
		switch s.result {
		case 1:
			p = w
		case -1:
			p = l
		}
		nll -= math.Log(max(p, eps))
	}
	return nll
}

// baselineNLL is the log-likelihood of ignoring the score: the overall
// win, draw and loss rates.
func baselineNLL(samples []wdlSample) float64 {
	var n [3]float64
	for _, s := range samples {
		n[s.result+1]++
	}
	var nll float64
	for _, c := range n {
		if c > 0 {
			nll -= c * math.Log(c/float64(len(samples)))
		}
	}
	return nll
}

// nelderMead minimises f from x0 (simplex steps of size step), restarting
// until a restart no longer improves.
func nelderMead(f func([]float64) float64, x0 []float64, step float64) []float64 {
	n := len(x0)
	best := append([]float64(nil), x0...)
	bestF := f(best)
	for restart := 0; restart < 5; restart++ {
		simplex := make([][]float64, n+1)
		vals := make([]float64, n+1)
		for i := range simplex {
			simplex[i] = append([]float64(nil), best...)
			if i > 0 {
				simplex[i][i-1] += step
			}
			vals[i] = f(simplex[i])
		}
		for iter := 0; iter < 2000; iter++ {
			// Order: best first.
			for i := 1; i <= n; i++ {
				for j := i; j > 0 && vals[j] < vals[j-1]; j-- {
					simplex[j], simplex[j-1] = simplex[j-1], simplex[j]
					vals[j], vals[j-1] = vals[j-1], vals[j]
				}
			}
			if vals[n]-vals[0] < 1e-7*(1+math.Abs(vals[0])) {
				break
			}
			centroid := make([]float64, n)
			for _, x := range simplex[:n] {
				for k := range centroid {
					centroid[k] += x[k] / float64(n)
				}
			}
			at := func(c float64) []float64 {
				y := make([]float64, n)
				for k := range y {
					y[k] = centroid[k] + c*(simplex[n][k]-centroid[k])
				}
				return y
			}
			r := at(-1)
			fr := f(r)
			switch {
			case fr < vals[0]:
				if e := at(-2); f(e) < fr {
					simplex[n], vals[n] = e, f(e)
				} else {
					simplex[n], vals[n] = r, fr
				}
			case fr < vals[n-1]:
				simplex[n], vals[n] = r, fr
			default:
				if c := at(0.5); f(c) < vals[n] {
					simplex[n], vals[n] = c, f(c)
				} else {
					for i := 1; i <= n; i++ {
						for k := range simplex[i] {
							simplex[i][k] = simplex[0][k] + 0.5*(simplex[i][k]-simplex[0][k])
						}
						vals[i] = f(simplex[i])
					}
				}
			}
		}
		if vals[0] >= bestF-1e-9 {
			break
		}
		best, bestF = simplex[0], vals[0]
	}
	return best
}

func writeWDLSamples(path string, samples []wdlSample) error {
	var b strings.Builder
	b.WriteString("cp,material,result\n")
	for _, s := range samples {
		fmt.Fprintf(&b, "%d,%d,%d\n", s.cp, s.material, s.result)
	}
	return os.WriteFile(path, []byte(b.String()), 0o644)
}

func readWDLSamples(path string) ([]wdlSample, error) {
	if path == "" {
		return nil, os.ErrNotExist
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var out []wdlSample
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		fields := strings.Split(sc.Text(), ",")
		if len(fields) != 3 || fields[0] == "cp" {
			continue
		}
		var v [3]int
		for i, x := range fields {
			if v[i], err = strconv.Atoi(x); err != nil {
				return nil, fmt.Errorf("%s: %q: %w", path, sc.Text(), err)
			}
		}
		out = append(out, wdlSample{cp: v[0], material: v[1], result: v[2]})
	}
	return out, sc.Err()
}

// TestFitWDLRecoversKnownModel checks the fitting code of the calibration:
// outcomes drawn from a known model must give back its a(t) and b.
func TestFitWDLRecoversKnownModel(t *testing.T) {
	want := []float64{300, -420, 200, 90}
	model := wdlModel(want)
	rng := rand.New(rand.NewPCG(8, 9))
	samples := make([]wdlSample, 30000)
	for i := range samples {
		m := 10 + rng.IntN(69)
		cp := rng.IntN(1201) - 600
		a, b := model(m)
		w := 1 / (1 + math.Exp((a-float64(cp))/b))
		l := 1 / (1 + math.Exp((a+float64(cp))/b))
		r := rng.Float64()
		res := 0
		switch {
		case r < w:
			res = 1
		case r < w+l:
			res = -1
		}
		samples[i] = wdlSample{cp: cp, material: m, result: res}
	}
	got := wdlModel(fitWDL(samples))
	for _, m := range []int{10, 30, 58, 78} {
		ga, gb := got(m)
		wa, wb := model(m)
		if math.Abs(ga-wa) > 0.1*wa || math.Abs(gb-wb) > 0.1*wb {
			t.Errorf("fitWDL(samples of %v): a, b at material %d = %.1f, %.1f; want %.1f, %.1f within 10%%", want, m, ga, gb, wa, wb)
		}
	}
	if fitted, truth := wdlNLL(samples, got), wdlNLL(samples, model); fitted > truth+1e-6 {
		t.Errorf("fitted log-loss %.2f > true model's %.2f; the optimiser stopped early", fitted, truth)
	}
}

// TestWDLModelIsShipped: the calibration fits the model WDL uses.
func TestWDLModelIsShipped(t *testing.T) {
	shipped := wdlModel([]float64{wdlA0, wdlA1, wdlA2, wdlB})
	for m := 0; m <= 104; m++ {
		a, b := wdlParams(m)
		if sa, sb := shipped(m); a != sa || b != sb || a <= 0 {
			t.Errorf("wdlParams(%d) = %v, %v; calibration model gives %v, %v (and a must be > 0)", m, a, b, sa, sb)
		}
	}
}
