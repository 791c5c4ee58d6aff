package train

import (
	"bytes"
	"errors"
	"math"
	"math/rand/v2"
	"reflect"
	"slices"
	"testing"

	"chessapi/shared/chess"
	"chessapi/shared/engine/nnue"
	"chessapi/shared/engine/nnue/dataset"
)

// pieceValue is the known function of the synthetic data: material.
var pieceValue = [7]int{chess.Pawn: 100, chess.Knight: 300, chess.Bishop: 320, chess.Rook: 500, chess.Queen: 900}

// synthetic returns n encoded records of random-game positions whose score
// is the material balance (side to move) and whose result is drawn from
// sigmoid(score / scale) (draws included, the expected result is exactly
// the sigmoid), and the positions themselves. Two positions are taken
// from each random game, so the positions are varied.
func synthetic(t testing.TB, seed uint64, n int, scale float64) ([]byte, []*chess.Position) {
	t.Helper()
	rng := rand.New(rand.NewPCG(seed, 9))
	var out []byte
	var positions []*chess.Position
	for len(positions) < n {
		pos := chess.StartingPosition()
		first := 6 + rng.IntN(60)
		for ply := 0; ply < first+40 && len(positions) < n; ply++ {
			moves := pos.LegalMoves()
			if len(moves) == 0 {
				break
			}
			pos.Play(moves[rng.IntN(len(moves))])
			if ply != first && ply != first+39 {
				continue
			}
			score := 0
			for s := chess.Square(0); s < 64; s++ {
				if pc := pos.PieceAt(s); pc != chess.NoPiece {
					v := pieceValue[pc.Type()]
					if pc.Color() != pos.Turn() {
						v = -v
					}
					score += v
				}
			}
			r := dataset.FromPosition(pos)
			r.Score = int16(score)
			p := 1 / (1 + math.Exp(-float64(score)/scale))
			draw := 0.6 * min(p, 1-p) // win p − draw/2, draw, loss 1 − p − draw/2
			switch u := rng.Float64(); {
			case u < p-draw/2:
				r.Result = dataset.Win
			case u < p+draw/2:
				r.Result = dataset.Draw
			default:
				r.Result = dataset.Loss
			}
			var err error
			if out, err = r.AppendBinary(out); err != nil {
				t.Fatal(err)
			}
			c := *pos
			positions = append(positions, &c)
		}
	}
	return out, positions
}

func testConfig(hidden int) Config {
	return Config{Hidden: hidden, Buckets: 2, BatchSize: 128, LR: 0.01, LRDrop: 0.5, LRStep: 4,
		Lambda: 1, Scale: 150, Seed: 3, Threads: 1}
}

// TestTrainerLearnsMaterial trains a small network on the synthetic data:
// the validation loss must fall from that of the random start to below a
// bound that only a network that learnt the piece values reaches, and the
// trained network must order simple positions by material.
func TestTrainerLearnsMaterial(t *testing.T) {
	data, _ := synthetic(t, 1, 6000, 150)
	val, _ := synthetic(t, 2, 1000, 150)
	tr, err := NewTrainer(testConfig(32), data)
	if err != nil {
		t.Fatal(err)
	}
	before := tr.Loss(val)
	for range 12 {
		tr.RunEpoch()
	}
	after := tr.Loss(val)
	t.Logf("validation loss %.5f → %.5f", before, after)
	// The material target spans the sigmoid; a network that predicts 0.5
	// everywhere scores about the data's variance (before), one that knows
	// the piece values almost nothing.
	const bound = 0.002
	if after > bound || after > before/10 {
		t.Fatalf("validation loss after training %.5f (from %.5f); want below %.4f and a tenth of the start", after, before, bound)
	}
	eval := func(fen string) float64 {
		pos, err := chess.ParseFEN(fen)
		if err != nil {
			t.Fatal(err)
		}
		own, their := features(pos)
		return tr.Model.Evaluate(own, their, pos.Occupied().Count(), tr.Config.Scale)
	}
	up := eval("4k3/8/8/8/8/8/8/R3K3 w - - 0 1")      // a rook up
	even := eval("4k3/8/8/4p3/4P3/8/8/4K3 w - - 0 1") // even
	down := eval("4k3/q7/8/8/8/8/8/4K3 w - - 0 1")    // a queen down
	if !(up > even+100 && even > down+200) {
		t.Errorf("rook up %.0f, even %.0f, queen down %.0f: want clearly ordered", up, even, down)
	}
}

// features returns pos's input features, the side to move's perspective
// first.
func features(pos *chess.Position) (own, their []uint16) {
	for occ := pos.Occupied(); occ != 0; {
		sq := occ.PopFirst()
		pc := pos.PieceAt(sq)
		own = append(own, uint16(nnue.FeatureIndex(pos.Turn(), pc, sq)))
		their = append(their, uint16(nnue.FeatureIndex(pos.Turn().Other(), pc, sq)))
	}
	return own, their
}

// TestTrainingIsDeterministic: the same seed gives the same weights bit
// for bit, with one thread or three; another seed gives others.
func TestTrainingIsDeterministic(t *testing.T) {
	data, _ := synthetic(t, 3, 1500, 150)
	run := func(seed uint64, threads int) *Model {
		cfg := testConfig(16)
		cfg.Seed, cfg.Threads = seed, threads
		tr, err := NewTrainer(cfg, data)
		if err != nil {
			t.Fatal(err)
		}
		for range 2 {
			tr.RunEpoch()
		}
		return tr.Model
	}
	a, b, c := run(5, 1), run(5, 3), run(6, 1)
	if !reflect.DeepEqual(a, b) {
		t.Error("seed 5 with 1 and 3 threads trained different weights")
	}
	if reflect.DeepEqual(a, c) {
		t.Error("seeds 5 and 6 trained the same weights")
	}
}

// TestCheckpointResumes: two epochs, a checkpoint, one more epoch from it
// equal three epochs in one go.
func TestCheckpointResumes(t *testing.T) {
	data, _ := synthetic(t, 4, 1500, 150)
	straight, err := NewTrainer(testConfig(16), data)
	if err != nil {
		t.Fatal(err)
	}
	for range 3 {
		straight.RunEpoch()
	}
	first, _ := NewTrainer(testConfig(16), data)
	first.RunEpoch()
	first.RunEpoch()
	var buf bytes.Buffer
	if err := first.Save(&buf); err != nil {
		t.Fatal(err)
	}
	resumed, err := Resume(&buf, data, 2)
	if err != nil {
		t.Fatal(err)
	}
	if resumed.Epoch != 2 {
		t.Fatalf("resumed at epoch %d; want 2", resumed.Epoch)
	}
	resumed.RunEpoch()
	if !reflect.DeepEqual(resumed.Model, straight.Model) {
		t.Error("2 epochs + checkpoint + 1 epoch differ from 3 epochs")
	}
	if _, err := Resume(bytes.NewReader([]byte("junk")), data, 1); err == nil {
		t.Error("Resume(junk) = nil error")
	}
}

func TestFitScaleRecoversKnownScale(t *testing.T) {
	for _, scale := range []float64{120, 300} {
		data, _ := synthetic(t, 5, 8000, scale)
		if got := FitScale(data); math.Abs(got-scale) > 0.1*scale {
			t.Errorf("FitScale of data made with scale %.0f = %.0f", scale, got)
		}
	}
}

// quantisationBound is the largest difference, in centipawns, allowed
// between the float network and its quantised export on the suite below
// (docs/engine.md states it).
const quantisationBound = 8

// TestQuantisedMatchesFloat trains a network of the engine's shape,
// exports it and compares the integer inference with the float model over
// a suite of positions from random games.
func TestQuantisedMatchesFloat(t *testing.T) {
	data, positions := synthetic(t, 6, 2000, 150)
	cfg := testConfig(nnue.Hidden)
	cfg.Buckets = 8
	cfg.Threads = 2
	tr, err := NewTrainer(cfg, data)
	if err != nil {
		t.Fatal(err)
	}
	for range 2 {
		tr.RunEpoch()
	}
	w, err := tr.Model.Export(int(cfg.Scale))
	if err != nil {
		t.Fatal(err)
	}
	b, err := w.MarshalBinary()
	if err != nil {
		t.Fatal(err)
	}
	net, err := nnue.Load(b)
	if err != nil {
		t.Fatal(err)
	}
	var worst, total float64
	for _, pos := range positions[:1000] {
		own, their := features(pos)
		want := tr.Model.Evaluate(own, their, pos.Occupied().Count(), cfg.Scale)
		var acc nnue.Accumulator
		net.Refresh(&acc, pos)
		got := float64(net.Evaluate(&acc, pos.Turn(), pos.Occupied().Count()))
		d := math.Abs(got - want)
		worst = max(worst, d)
		total += d
	}
	t.Logf("float vs quantised over 1000 positions: mean %.2f cp, worst %.2f cp", total/1000, worst)
	if worst > quantisationBound {
		t.Errorf("worst float vs quantised difference %.2f cp; want at most %d", worst, quantisationBound)
	}
}

// TestExportOtherShapes: a model of another width exports and its file
// round-trips (the trainer reads it back with -init), but the engine's
// NewNetwork refuses it; a width the format cannot hold does not export.
func TestExportOtherShapes(t *testing.T) {
	m := NewModel(16, 1, 1)
	w, err := m.Export(100)
	if err != nil {
		t.Fatal(err)
	}
	b, err := w.MarshalBinary()
	if err != nil {
		t.Fatal(err)
	}
	back, err := nnue.ParseWeights(b)
	if err != nil || back.Hidden != 16 || !reflect.DeepEqual(ModelFromWeights(back), ModelFromWeights(w)) {
		t.Fatalf("16-wide file: ParseWeights = %v (hidden %v); want it back", err, back)
	}
	if _, err := nnue.NewNetwork(back); !errors.Is(err, nnue.ErrShape) {
		t.Errorf("NewNetwork of a 16-wide network: %v; want ErrShape (this build has %d)", err, nnue.Hidden)
	}
	if _, err := NewModel(12, 1, 1).Export(100); err == nil {
		t.Error("Export of a 12-wide model = nil error; the format takes multiples of 8")
	}
}

func TestConfigErrors(t *testing.T) {
	bad := []func(c *Config){
		func(c *Config) { c.Hidden = 6 },
		func(c *Config) { c.Buckets = 9 },
		func(c *Config) { c.BatchSize = 3 },
		func(c *Config) { c.LR = 0 },
		func(c *Config) { c.Lambda = 1.5 },
		func(c *Config) { c.Scale = 0 },
		func(c *Config) { c.Threads = 0 },
	}
	for i, f := range bad {
		cfg := testConfig(16)
		f(&cfg)
		if _, err := NewTrainer(cfg, nil); err == nil {
			t.Errorf("config %d: NewTrainer = nil error", i)
		}
	}
}

// TestMirrorFlipsFiles: a record decoded mirrored has the features of the
// position with files a↔h swapped.
func TestMirrorFlipsFiles(t *testing.T) {
	pos, err := chess.ParseFEN("r1bqk2r/pppp1ppp/2n2n2/2b1p3/2B1P3/3P1N2/PPP2PPP/RNBQK2R b KQkq - 0 5")
	if err != nil {
		t.Fatal(err)
	}
	mirrored, err := chess.ParseFEN("r2kqb1r/ppp1pppp/2n2n2/3p1b2/3P1B2/2N1P3/PPP2PPP/R2KQBNR b - - 0 5")
	if err != nil {
		t.Fatal(err)
	}
	r := dataset.FromPosition(pos)
	b, err := r.MarshalBinary()
	if err != nil {
		t.Fatal(err)
	}
	var s sample
	decodeSample(b, &s, 8, 150, 1, true)
	own, their := features(mirrored)
	got0, got1 := append([]uint16(nil), s.features[0][:s.n]...), append([]uint16(nil), s.features[1][:s.n]...)
	slices.Sort(got0)
	slices.Sort(got1)
	slices.Sort(own)
	slices.Sort(their)
	if !slices.Equal(got0, own) || !slices.Equal(got1, their) {
		t.Errorf("mirrored features %v / %v; want %v / %v", got0, got1, own, their)
	}
}

// TestModelFromWeightsUndoesExport: the float model of an exported network
// is within half a quantisation step of the model exported, exports to
// the same weights again, and trains on from there.
func TestModelFromWeightsUndoesExport(t *testing.T) {
	m := NewModel(nnue.Hidden, 4, 7)
	for i := range m.Bias {
		m.Bias[i] = float32(i%7) * 0.01
	}
	for i := range m.OutBias {
		m.OutBias[i] = 0.1 * float32(i)
	}
	w, err := m.Export(150)
	if err != nil {
		t.Fatal(err)
	}
	back := ModelFromWeights(w)
	if back.Hidden != m.Hidden || back.Buckets != m.Buckets {
		t.Fatalf("shape %d×%d; want %d×%d", back.Hidden, back.Buckets, m.Hidden, m.Buckets)
	}
	steps := []float64{1.0 / nnue.QA, 1.0 / nnue.QA, 1.0 / nnue.QB, 1.0 / (nnue.QA * nnue.QB)}
	for k, p := range m.params() {
		for i, v := range p {
			if d := math.Abs(float64(v - back.params()[k][i])); d > steps[k]/2+1e-7 {
				t.Fatalf("parameter block %d, value %d: %g became %g (more than half a step)", k, i, v, back.params()[k][i])
			}
		}
	}
	again, err := back.Export(150)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(again, w) {
		t.Error("re-exported weights differ from the first export")
	}

	data, _ := synthetic(t, 11, 512, 150)
	cfg := testConfig(nnue.Hidden)
	cfg.Buckets = 4
	tr, err := NewTrainerFrom(cfg, back, data)
	if err != nil {
		t.Fatal(err)
	}
	before := tr.Loss(data)
	tr.RunEpoch()
	if after := tr.Loss(data); !(after < before) {
		t.Errorf("loss %g after an epoch from the exported model, %g before; want it to fall", after, before)
	}
	cfg.Buckets = 2
	if _, err := NewTrainerFrom(cfg, ModelFromWeights(w), data); err == nil {
		t.Error("NewTrainerFrom with a 2-bucket config and a 4-bucket model: nil error")
	}
}

// TestWidenKeepsTheFunction: a widened model evaluates every position as
// the narrow one does, and training then grows its new units.
func TestWidenKeepsTheFunction(t *testing.T) {
	data, positions := synthetic(t, 12, 512, 150)
	cfg := testConfig(16)
	tr, err := NewTrainer(cfg, data)
	if err != nil {
		t.Fatal(err)
	}
	tr.RunEpoch()
	narrow := tr.Model
	wide, err := narrow.Widen(32, 5)
	if err != nil {
		t.Fatal(err)
	}
	for i, pos := range positions[:200] {
		own, their := features(pos)
		n := pos.Occupied().Count()
		if a, b := narrow.Evaluate(own, their, n, 150), wide.Evaluate(own, their, n, 150); a != b {
			t.Fatalf("position %d: narrow %g, widened %g", i, a, b)
		}
	}
	cfg.Hidden = 32
	wt, err := NewTrainerFrom(cfg, wide, data)
	if err != nil {
		t.Fatal(err)
	}
	wt.RunEpoch()
	grown := false
	for b := range wide.Buckets {
		for _, v := range wide.Output[b*64+16 : b*64+32] {
			grown = grown || v != 0
		}
	}
	if !grown {
		t.Error("after an epoch the new units' output weights are all still zero")
	}
	if _, err := narrow.Widen(8, 1); err == nil {
		t.Error("Widen to 8 of a 16-wide model: nil error")
	}
}
