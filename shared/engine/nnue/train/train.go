package train

import (
	"encoding/binary"
	"encoding/gob"
	"errors"
	"fmt"
	"io"
	"math"
	"math/bits"
	"math/rand/v2"
	"sync"
	"sync/atomic"

	"chessapi/shared/chess"
	"chessapi/shared/engine/nnue"
	"chessapi/shared/engine/nnue/dataset"
)

// Config is a training run's settings.
type Config struct {
	Hidden    int     // accumulator size (the engine reads nnue.Hidden)
	Buckets   int     // output buckets, 1..nnue.MaxBuckets
	BatchSize int     // positions per optimiser step
	LR        float64 // Adam's learning rate at the start
	LRDrop    float64 // factor applied every LRStep epochs
	LRStep    int     // epochs between drops (0 = never)
	Lambda    float64 // weight of the score in the target (1 − Lambda: the result)
	Scale     float64 // centipawns per output unit (FitScale)
	Seed      uint64  // initial weights and shuffles
	Threads   int     // goroutines (the result does not depend on it)
	// Mirror trains every position, with probability ½ per epoch, mirrored
	// left to right (files a↔h): the same evaluation up to castling rights,
	// which the network does not see; it doubles the positions' variety.
	Mirror bool
}

// chunks is the fixed number of parts a batch is cut into (see the package
// comment: the thread count must not change the sums).
const chunks = 16

func (c *Config) validate() error {
	switch {
	case c.Hidden < 4 || c.Hidden%4 != 0:
		return fmt.Errorf("train: hidden %d: want a positive multiple of 4", c.Hidden)
	case c.Buckets < 1 || c.Buckets > nnue.MaxBuckets:
		return fmt.Errorf("train: buckets %d: want 1..%d", c.Buckets, nnue.MaxBuckets)
	case c.BatchSize < chunks:
		return fmt.Errorf("train: batch size %d: want at least %d", c.BatchSize, chunks)
	case !(c.LR > 0) || c.LRDrop <= 0 || c.LRStep < 0:
		return fmt.Errorf("train: learning rate %g, drop %g every %d: want lr > 0, drop > 0", c.LR, c.LRDrop, c.LRStep)
	case c.Lambda < 0 || c.Lambda > 1:
		return fmt.Errorf("train: lambda %g: want 0..1", c.Lambda)
	case !(c.Scale > 0):
		return fmt.Errorf("train: scale %g: want > 0", c.Scale)
	case c.Threads < 1:
		return fmt.Errorf("train: threads %d: want at least 1", c.Threads)
	}
	return nil
}

// Trainer trains a Model on encoded records (dataset.RecordSize bytes each).
type Trainer struct {
	Config Config
	Model  *Model
	Epoch  int // epochs completed

	adamM, adamV *Model
	step         int
	grads        [chunks]*Model
	scratch      [chunks][]float32
	train        []byte
}

// NewTrainer returns a trainer of a fresh model on the records of train.
func NewTrainer(cfg Config, train []byte) (*Trainer, error) {
	if err := cfg.validate(); err != nil {
		return nil, err
	}
	t := &Trainer{Config: cfg, Model: NewModel(cfg.Hidden, cfg.Buckets, cfg.Seed)}
	t.init(train)
	return t, nil
}

// NewTrainerFrom returns a trainer that goes on training model (for
// example ModelFromWeights of an exported network) on the records of
// train, with a fresh optimiser state. The model's shape must be the
// config's.
func NewTrainerFrom(cfg Config, model *Model, train []byte) (*Trainer, error) {
	if err := cfg.validate(); err != nil {
		return nil, err
	}
	if model.Hidden != cfg.Hidden || model.Buckets != cfg.Buckets {
		return nil, fmt.Errorf("train: model of hidden %d, %d buckets; the config has hidden %d, %d buckets",
			model.Hidden, model.Buckets, cfg.Hidden, cfg.Buckets)
	}
	t := &Trainer{Config: cfg, Model: model}
	t.init(train)
	return t, nil
}

func (t *Trainer) init(train []byte) {
	zero := func() *Model {
		m := t.Model
		return &Model{Hidden: m.Hidden, Buckets: m.Buckets, Feature: make([]float32, len(m.Feature)),
			Bias: make([]float32, len(m.Bias)), Output: make([]float32, len(m.Output)), OutBias: make([]float32, len(m.OutBias))}
	}
	if t.adamM == nil {
		t.adamM, t.adamV = zero(), zero()
	}
	for c := range chunks {
		t.grads[c] = zero()
		t.scratch[c] = make([]float32, 6*t.Model.Hidden)
	}
	t.train = train
}

// Positions returns the number of training positions.
func (t *Trainer) Positions() int { return len(t.train) / dataset.RecordSize }

// LearningRate returns the rate of the next epoch.
func (t *Trainer) LearningRate() float64 {
	lr := t.Config.LR
	if t.Config.LRStep > 0 {
		lr *= math.Pow(t.Config.LRDrop, float64(t.Epoch/t.Config.LRStep))
	}
	return lr
}

// RunEpoch trains one pass over the training records in a seeded random
// order and returns the mean training loss.
func (t *Trainer) RunEpoch() float64 {
	n := t.Positions()
	order := make([]int32, n)
	for i := range order {
		order[i] = int32(i)
	}
	rng := rand.New(rand.NewPCG(t.Config.Seed, uint64(t.Epoch)+1))
	rng.Shuffle(n, func(i, j int) { order[i], order[j] = order[j], order[i] })
	lr := t.LearningRate()
	var total float64
	for start := 0; start < n; start += t.Config.BatchSize {
		batch := order[start:min(start+t.Config.BatchSize, n)]
		total += t.step1(batch, lr)
	}
	t.Epoch++
	return total / float64(n)
}

// step1 computes the gradient of one batch and takes an Adam step; it
// returns the batch's summed loss.
func (t *Trainer) step1(batch []int32, lr float64) float64 {
	var losses [chunks]float64
	size := (len(batch) + chunks - 1) / chunks
	t.parallel(chunks, func(c int) {
		g := t.grads[c]
		for _, p := range g.params() {
			clear(p)
		}
		lo, hi := min(c*size, len(batch)), min((c+1)*size, len(batch))
		var s sample
		for _, idx := range batch[lo:hi] {
			mirror := t.Config.Mirror && splitMix(t.Config.Seed^uint64(t.Epoch)<<40^uint64(idx))&1 == 1
			t.decode(int(idx), &s, mirror)
			losses[c] += t.Model.backward(&s, g, t.scratch[c])
		}
	})
	var loss float64
	for _, l := range losses {
		loss += l
	}
	t.step++
	t.adam(float32(lr), float32(1/float64(len(batch))))
	return loss
}

// adam sums the chunks' gradients (in chunk order) and updates every
// parameter, in parallel over parameter ranges.
func (t *Trainer) adam(lr, gradScale float32) {
	const beta1, beta2, eps = 0.9, 0.999, 1e-8
	c1 := float32(1 - math.Pow(beta1, float64(t.step)))
	c2 := float32(1 - math.Pow(beta2, float64(t.step)))
	params, ms, vs := t.Model.params(), t.adamM.params(), t.adamV.params()
	var gs [chunks][][]float32
	for c := range chunks {
		gs[c] = t.grads[c].params()
	}
	for k := range params {
		clip := float32(math.Inf(1)) // the output bias is int32
		switch k {
		case 0, 1: // feature weights and bias: keep the int16 accumulator safe
			clip = nnue.WeightClip
		case 2:
			clip = nnue.OutputClip
		}
		p, m, v := params[k], ms[k], vs[k]
		const part = 4096
		t.parallel((len(p)+part-1)/part, func(j int) {
			lo, hi := j*part, min((j+1)*part, len(p))
			for i := lo; i < hi; i++ {
				var g float32
				for c := range chunks {
					g += gs[c][k][i]
				}
				g *= gradScale
				m[i] = beta1*m[i] + (1-beta1)*g
				v[i] = beta2*v[i] + (1-beta2)*g*g
				step := lr * (m[i] / c1) / (float32(math.Sqrt(float64(v[i]/c2))) + eps)
				p[i] = min(max(p[i]-step, -clip), clip)
			}
		})
	}
}

// parallel runs f(0..n-1) on the configured threads.
func (t *Trainer) parallel(n int, f func(i int)) {
	threads := min(t.Config.Threads, n)
	if threads <= 1 {
		for i := range n {
			f(i)
		}
		return
	}
	var next atomic.Int64
	var wg sync.WaitGroup
	for range threads {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				i := int(next.Add(1) - 1)
				if i >= n {
					return
				}
				f(i)
			}
		}()
	}
	wg.Wait()
}

// backward adds the gradient of s's loss to g and returns the loss.
// scratch holds 6·Hidden floats.
func (m *Model) backward(s *sample, g *Model, scratch []float32) float64 {
	h := m.Hidden
	acc, act, dx := scratch[:2*h], scratch[2*h:4*h], scratch[4*h:6*h]
	o := m.forward(s, acc, act)
	p := sigmoid(o)
	diff := p - s.target
	dOut := 2 * diff * p * (1 - p)
	w := m.Output[s.bucket*2*h : (s.bucket+1)*2*h]
	gw := g.Output[s.bucket*2*h : (s.bucket+1)*2*h]
	g.OutBias[s.bucket] += dOut
	for i, x := range acc {
		gw[i] += dOut * act[i]
		if x > 0 && x < 1 {
			dx[i] = dOut * w[i] * 2 * x
		} else {
			dx[i] = 0
		}
	}
	for p := range 2 {
		d := dx[p*h : (p+1)*h]
		for i, v := range d {
			g.Bias[i] += v
		}
		for _, f := range s.features[p][:s.n] {
			row := g.Feature[int(f)*h : int(f)*h+h]
			for i, v := range d {
				row[i] += v
			}
		}
	}
	return float64(diff) * float64(diff)
}

func splitMix(x uint64) uint64 {
	x += 0x9e3779b97f4a7c15
	x = (x ^ x>>30) * 0xbf58476d1ce4e5b9
	x = (x ^ x>>27) * 0x94d049bb133111eb
	return x ^ x>>31
}

func sigmoid(x float32) float32 { return float32(1 / (1 + math.Exp(-float64(x)))) }

// decode fills s from training record i, mirrored left to right if asked.
func (t *Trainer) decode(i int, s *sample, mirror bool) {
	decodeSample(t.train[i*dataset.RecordSize:(i+1)*dataset.RecordSize], s, t.Config.Buckets, t.Config.Scale, t.Config.Lambda, mirror)
}

// decodeSample reads an encoded record (already validated when loaded)
// into features, bucket and target; mirror flips the files (a↔h).
func decodeSample(b []byte, s *sample, buckets int, scale, lambda float64, mirror bool) {
	occ := binary.LittleEndian.Uint64(b)
	stm := chess.Color(b[27] & 1)
	var flip chess.Square
	if mirror {
		flip = 7
	}
	n := 0
	for o := occ; o != 0; o &= o - 1 {
		sq := chess.Square(bits.TrailingZeros64(o)) ^ flip
		pc := chess.Piece(b[8+n/2] >> (4 * (n & 1)) & 15)
		s.features[0][n] = uint16(nnue.FeatureIndex(stm, pc, sq))
		s.features[1][n] = uint16(nnue.FeatureIndex(stm^1, pc, sq))
		n++
	}
	s.n = n
	s.bucket = nnue.Bucket(n, buckets)
	score := float64(int16(binary.LittleEndian.Uint16(b[24:])))
	result := float64(b[26]) / 2
	s.target = float32(lambda/(1+math.Exp(-score/scale)) + (1-lambda)*result)
}

// Loss returns the mean loss of the model over encoded records (the
// validation loss), computed on the configured threads.
func (t *Trainer) Loss(records []byte) float64 {
	target, _ := t.Losses(records)
	return target
}

// Losses returns the mean loss against the training target and against
// the game results alone, (sigmoid(o) − result)²: the second compares
// models trained with different λ.
func (t *Trainer) Losses(records []byte) (target, result float64) {
	n := len(records) / dataset.RecordSize
	if n == 0 {
		return math.NaN(), math.NaN()
	}
	var losses, results [chunks]float64
	size := (n + chunks - 1) / chunks
	t.parallel(chunks, func(c int) {
		var s sample
		scratch := t.scratch[c]
		h := t.Model.Hidden
		for i := c * size; i < min((c+1)*size, n); i++ {
			b := records[i*dataset.RecordSize : (i+1)*dataset.RecordSize]
			decodeSample(b, &s, t.Config.Buckets, t.Config.Scale, t.Config.Lambda, false)
			p := float64(sigmoid(t.Model.forward(&s, scratch[:2*h], scratch[2*h:4*h])))
			d := p - float64(s.target)
			losses[c] += d * d
			r := p - float64(b[26])/2
			results[c] += r * r
		}
	})
	for c := range chunks {
		target += losses[c]
		result += results[c]
	}
	return target / float64(n), result / float64(n)
}

// ScoreLosses returns the losses Losses reports for a predictor that
// knows the stored search score, sigmoid(score / Scale): for scale (a
// static evaluation sees less than the search did).
func (t *Trainer) ScoreLosses(records []byte) (target, result float64) {
	n := len(records) / dataset.RecordSize
	var s sample
	for i := range n {
		b := records[i*dataset.RecordSize : (i+1)*dataset.RecordSize]
		decodeSample(b, &s, t.Config.Buckets, t.Config.Scale, t.Config.Lambda, false)
		score := float64(int16(binary.LittleEndian.Uint16(b[24:])))
		p := 1 / (1 + math.Exp(-score/t.Config.Scale))
		d, r := p-float64(s.target), p-float64(b[26])/2
		target += d * d
		result += r * r
	}
	return target / float64(n), result / float64(n)
}

// FitScale returns the scale K (centipawns) at which sigmoid(score / K)
// predicts the results of the records best (least squares, golden-section
// search over 50..2000), from at most 2 M records spread over the data.
func FitScale(records []byte) float64 {
	n := len(records) / dataset.RecordSize
	stride := max(1, n/2_000_000)
	loss := func(k float64) float64 {
		var sum float64
		for i := 0; i < n; i += stride {
			b := records[i*dataset.RecordSize:]
			score := float64(int16(binary.LittleEndian.Uint16(b[24:])))
			d := 1/(1+math.Exp(-score/k)) - float64(b[26])/2
			sum += d * d
		}
		return sum
	}
	lo, hi := 50.0, 2000.0
	phi := (math.Sqrt(5) - 1) / 2
	a, b := hi-phi*(hi-lo), lo+phi*(hi-lo)
	fa, fb := loss(a), loss(b)
	for hi-lo > 0.5 {
		if fa < fb {
			hi, b, fb = b, a, fa
			a = hi - phi*(hi-lo)
			fa = loss(a)
		} else {
			lo, a, fa = a, b, fb
			b = lo + phi*(hi-lo)
			fb = loss(b)
		}
	}
	return math.Round((lo + hi) / 2)
}

// checkpoint is what Save writes: enough to continue training exactly.
type checkpoint struct {
	Config       Config
	Epoch, Step  int
	Model        *Model
	AdamM, AdamV *Model
}

// Save writes a checkpoint of the trainer (model, optimiser state, epoch).
func (t *Trainer) Save(w io.Writer) error {
	return gob.NewEncoder(w).Encode(checkpoint{Config: t.Config, Epoch: t.Epoch, Step: t.step,
		Model: t.Model, AdamM: t.adamM, AdamV: t.adamV})
}

// Resume reads a checkpoint and returns a trainer that continues it on the
// records of train. threads overrides the checkpoint's thread count (it
// does not change the result).
func Resume(r io.Reader, train []byte, threads int) (*Trainer, error) {
	var c checkpoint
	if err := gob.NewDecoder(r).Decode(&c); err != nil {
		return nil, fmt.Errorf("train: checkpoint: %w", err)
	}
	if c.Model == nil || c.AdamM == nil || c.AdamV == nil {
		return nil, errors.New("train: checkpoint: incomplete")
	}
	if threads > 0 {
		c.Config.Threads = threads
	}
	if err := c.Config.validate(); err != nil {
		return nil, err
	}
	m := c.Model
	if m.Hidden != c.Config.Hidden || m.Buckets != c.Config.Buckets || len(m.Feature) != nnue.Inputs*m.Hidden ||
		len(m.Bias) != m.Hidden || len(m.Output) != m.Buckets*2*m.Hidden || len(m.OutBias) != m.Buckets {
		return nil, errors.New("train: checkpoint: model shape does not match its config")
	}
	t := &Trainer{Config: c.Config, Model: m, Epoch: c.Epoch, step: c.Step, adamM: c.AdamM, adamV: c.AdamV}
	t.init(train)
	return t, nil
}
