// Command train trains the evaluation network on data from cmd/datagen and
// exports it in the engine's format (shared/engine/nnue).
//
//	go run ./cmd/train -data /work/data/nnue/r1 -out /work/data/nnue/train-r1 -epochs 20
//
// -data takes directories (every *.bin in them) and files, comma-separated.
// The last -val share of each file is held out for the validation loss
// (records are appended a game at a time, so the held-out positions come
// from other games than the trained ones, save one game at the cut).
// After every epoch the command prints the training and validation loss,
// writes OUT/checkpoint.gob (continue with -resume) and OUT/epoch-N.nnue.
// -scale 0 fits the score scale to the data first (train.FitScale).
// -init starts from an exported network (the embedded one, say) instead of
// random weights, with a fresh optimiser: a further round of training on
// new data without the data the network was made from; with a larger
// -hidden the network is widened first (its function unchanged, the new
// units starting at zero output weight).
package main

import (
	"bytes"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"runtime/pprof"
	"slices"
	"strings"
	"time"

	"chessapi/shared/engine/nnue"
	"chessapi/shared/engine/nnue/dataset"
	"chessapi/shared/engine/nnue/train"
)

func main() {
	if err := run(os.Args[1:], os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "train:", err)
		os.Exit(2)
	}
}

type options struct {
	data       string
	valData    string
	out        string
	resume     string
	init       string
	set        map[string]bool // flags given on the command line
	val        float64
	epochs     int
	limit      int
	cfg        train.Config
	cpuProfile string
}

func parseFlags(args []string) (options, error) {
	var o options
	fs := flag.NewFlagSet("train", flag.ContinueOnError)
	fs.StringVar(&o.data, "data", "", "data directories or files, comma-separated (required)")
	fs.StringVar(&o.valData, "valdata", "", "validate on the tails of these files instead (comma-separated; -data files not named here are trained on whole)")
	fs.StringVar(&o.out, "out", "", "directory for checkpoints and exported networks (required)")
	fs.StringVar(&o.resume, "resume", "", "checkpoint to continue (its settings win over the flags below)")
	fs.StringVar(&o.init, "init", "", "exported network (.nnue) to start from instead of random weights; its buckets and scale are used, and its hidden size unless -hidden widens it")
	fs.Float64Var(&o.val, "val", 0.02, "share of each file held out for validation")
	fs.IntVar(&o.epochs, "epochs", 20, "train until this many epochs are complete")
	fs.IntVar(&o.limit, "limit", 0, "use at most this many training positions, the first of each file (0 = all)")
	fs.IntVar(&o.cfg.Hidden, "hidden", nnue.Hidden, "accumulator size per perspective (default: the engine's)")
	fs.IntVar(&o.cfg.Buckets, "buckets", 8, "output buckets by piece count")
	fs.IntVar(&o.cfg.BatchSize, "batch", 16384, "positions per step")
	fs.Float64Var(&o.cfg.LR, "lr", 0.001, "learning rate")
	fs.Float64Var(&o.cfg.LRDrop, "lrdrop", 0.3, "learning-rate factor every -lrstep epochs")
	fs.IntVar(&o.cfg.LRStep, "lrstep", 8, "epochs between learning-rate drops (0 = never)")
	fs.Float64Var(&o.cfg.Lambda, "lambda", 0.7, "weight of the search score in the target (the rest: the result)")
	fs.Float64Var(&o.cfg.Scale, "scale", 0, "centipawns per output unit (0 = fit to the data)")
	fs.Uint64Var(&o.cfg.Seed, "seed", 1, "seed of the initial weights and the shuffles")
	fs.IntVar(&o.cfg.Threads, "threads", runtime.NumCPU(), "goroutines (the result does not depend on it)")
	fs.BoolVar(&o.cfg.Mirror, "mirror", true, "train positions mirrored left to right half of the time")
	fs.StringVar(&o.cpuProfile, "cpuprofile", "", "write a CPU profile to this file")
	if err := fs.Parse(args); err != nil {
		return o, err
	}
	o.set = map[string]bool{}
	fs.Visit(func(f *flag.Flag) { o.set[f.Name] = true })
	switch {
	case fs.NArg() > 0:
		return o, fmt.Errorf("unexpected argument %q", fs.Arg(0))
	case o.data == "":
		return o, errors.New("-data is required")
	case o.out == "":
		return o, errors.New("-out is required")
	case o.val < 0 || o.val >= 1:
		return o, fmt.Errorf("-val %g: want 0 <= val < 1", o.val)
	case o.epochs < 1:
		return o, fmt.Errorf("-epochs %d: want at least 1", o.epochs)
	case o.init != "" && o.resume != "":
		return o, errors.New("-init and -resume: give one (a checkpoint already holds its model)")
	}
	return o, nil
}

// dataFiles expands the -data list.
func dataFiles(list string) ([]string, error) {
	var out []string
	for _, p := range strings.Split(list, ",") {
		p = strings.TrimSpace(p)
		if p == "" {
			continue
		}
		st, err := os.Stat(p)
		if err != nil {
			return nil, fmt.Errorf("-data: %w", err)
		}
		if !st.IsDir() {
			out = append(out, p)
			continue
		}
		m, err := filepath.Glob(filepath.Join(p, "*.bin"))
		if err != nil {
			return nil, err
		}
		out = append(out, m...)
	}
	if len(out) == 0 {
		return nil, errors.New("-data: no data file")
	}
	return out, nil
}

// load reads every file and splits it into training and validation
// records: the last val share of each file is held out, or, with
// valFiles, of each of those files (a -data file among them is trained on
// without its tail, the others whole).
func load(files, valFiles []string, val float64, limit int) (trainSet, valSet []byte, err error) {
	perFile := 0
	if limit > 0 {
		perFile = (limit + len(files) - 1) / len(files)
	}
	heldOut := func(f string) bool { return len(valFiles) == 0 || slices.Contains(valFiles, f) }
	read := func(f string) ([]byte, int, error) {
		fh, err := os.Open(f)
		if err != nil {
			return nil, 0, err
		}
		defer fh.Close()
		recs, err := dataset.ReadAll(fh)
		if err != nil {
			return nil, 0, fmt.Errorf("%s: %w", f, err)
		}
		return recs, len(recs) / dataset.RecordSize, nil
	}
	for _, f := range files {
		recs, n, err := read(f)
		if err != nil {
			return nil, nil, err
		}
		nTrain := n
		if heldOut(f) {
			nTrain = n - int(float64(n)*val)
		}
		if perFile > 0 {
			nTrain = min(nTrain, perFile)
		}
		trainSet = append(trainSet, recs[:nTrain*dataset.RecordSize]...)
	}
	sources := files
	if len(valFiles) > 0 {
		sources = valFiles
	}
	for _, f := range sources {
		recs, n, err := read(f)
		if err != nil {
			return nil, nil, err
		}
		valSet = append(valSet, recs[(n-int(float64(n)*val))*dataset.RecordSize:]...)
	}
	return trainSet, valSet, nil
}

func run(args []string, stdout io.Writer) error {
	o, err := parseFlags(args)
	if err != nil {
		return err
	}
	if o.cpuProfile != "" {
		f, err := os.Create(o.cpuProfile)
		if err != nil {
			return err
		}
		defer f.Close()
		if err := pprof.StartCPUProfile(f); err != nil {
			return err
		}
		defer pprof.StopCPUProfile()
	}
	files, err := dataFiles(o.data)
	if err != nil {
		return err
	}
	var valFiles []string
	if o.valData != "" {
		if valFiles, err = dataFiles(o.valData); err != nil {
			return err
		}
	}
	trainSet, valSet, err := load(files, valFiles, o.val, o.limit)
	if err != nil {
		return err
	}
	if err := os.MkdirAll(o.out, 0o755); err != nil {
		return err
	}
	var t *train.Trainer
	if o.resume != "" {
		f, err := os.Open(o.resume)
		if err != nil {
			return err
		}
		t, err = train.Resume(f, trainSet, o.cfg.Threads)
		f.Close()
		if err != nil {
			return err
		}
	} else if o.init != "" {
		model, err := initialModel(&o)
		if err != nil {
			return err
		}
		if t, err = train.NewTrainerFrom(o.cfg, model, trainSet); err != nil {
			return err
		}
		fmt.Fprintf(stdout, "train: starting from %s\n", o.init)
	} else {
		if o.cfg.Scale == 0 {
			o.cfg.Scale = train.FitScale(trainSet)
			fmt.Fprintf(stdout, "train: fitted scale %.0f cp\n", o.cfg.Scale)
		}
		t, err = train.NewTrainer(o.cfg, trainSet)
		if err != nil {
			return err
		}
	}
	c := t.Config
	fmt.Fprintf(stdout, "train: %d files, %d training and %d validation positions; hidden %d, buckets %d, batch %d, lr %g (×%g every %d), lambda %g, scale %.0f, mirror %v, seed %d, threads %d\n",
		len(files), t.Positions(), len(valSet)/dataset.RecordSize, c.Hidden, c.Buckets, c.BatchSize, c.LR, c.LRDrop, c.LRStep, c.Lambda, c.Scale, c.Mirror, c.Seed, c.Threads)
	if t.Epoch == 0 {
		v, r := t.Losses(valSet)
		sv, sr := t.ScoreLosses(valSet)
		fmt.Fprintf(stdout, "epoch 0: validation loss %.6f (against the results alone %.6f); the stored search score would score %.6f (%.6f)\n", v, r, sv, sr)
	}
	for t.Epoch < o.epochs {
		start := time.Now()
		lr := t.LearningRate()
		trainLoss := t.RunEpoch()
		valLoss, resultLoss := t.Losses(valSet)
		fmt.Fprintf(stdout, "epoch %d: train loss %.6f, validation loss %.6f (against the results alone %.6f), lr %.2g, %s\n",
			t.Epoch, trainLoss, valLoss, resultLoss, lr, time.Since(start).Round(time.Second))
		if err := save(o.out, t, valSet, stdout); err != nil {
			return err
		}
	}
	return nil
}

// initialModel reads the -init network and sets the config's shape and
// scale to its own: the scale is part of what its outputs mean, so a -scale
// or shape that differs is an error rather than a silent change.
func initialModel(o *options) (*train.Model, error) {
	b, err := os.ReadFile(o.init)
	if err != nil {
		return nil, fmt.Errorf("-init: %w", err)
	}
	w, err := nnue.ParseWeights(b)
	if err != nil {
		return nil, fmt.Errorf("-init %s: %w", o.init, err)
	}
	model := train.ModelFromWeights(w)
	if o.set["hidden"] && o.cfg.Hidden != model.Hidden {
		// A wider -hidden widens the network (train.Model.Widen: the same
		// function to start with, new units to grow).
		if model, err = model.Widen(o.cfg.Hidden, o.cfg.Seed); err != nil {
			return nil, fmt.Errorf("-hidden %d: the -init network has %d; only a wider one can start from it", o.cfg.Hidden, w.Hidden)
		}
	}
	switch {
	case o.set["buckets"] && o.cfg.Buckets != model.Buckets:
		return nil, fmt.Errorf("-buckets %d: the -init network has %d", o.cfg.Buckets, model.Buckets)
	case o.cfg.Scale != 0 && o.cfg.Scale != float64(w.Scale):
		return nil, fmt.Errorf("-scale %g: the -init network's scale is %d", o.cfg.Scale, w.Scale)
	}
	o.cfg.Hidden, o.cfg.Buckets, o.cfg.Scale = model.Hidden, model.Buckets, float64(w.Scale)
	return model, nil
}

// save writes the checkpoint (atomically) and the epoch's network, and
// prints how far the quantised network is from the float one on the first
// 2000 validation positions.
func save(dir string, t *train.Trainer, valSet []byte, stdout io.Writer) error {
	var buf bytes.Buffer
	if err := t.Save(&buf); err != nil {
		return err
	}
	tmp := filepath.Join(dir, "checkpoint.gob.tmp")
	if err := os.WriteFile(tmp, buf.Bytes(), 0o644); err != nil {
		return err
	}
	if err := os.Rename(tmp, filepath.Join(dir, "checkpoint.gob")); err != nil {
		return err
	}
	w, err := t.Model.Export(int(t.Config.Scale + 0.5))
	if err != nil {
		fmt.Fprintln(os.Stderr, "train: not exported:", err)
		return nil // a model of a size the format cannot hold trains, but is not written
	}
	b, err := w.MarshalBinary()
	if err != nil {
		return err
	}
	file := filepath.Join(dir, fmt.Sprintf("epoch-%d.nnue", t.Epoch))
	if w.Hidden != nnue.Hidden {
		// The engine of a build with this width reads it; this build cannot
		// run it to compare.
		fmt.Fprintf(stdout, "epoch %d: hidden %d (this build's engine has %d): not compared with the float model\n", t.Epoch, w.Hidden, nnue.Hidden)
		return os.WriteFile(file, b, 0o644)
	}
	net, err := nnue.Load(b)
	if err != nil {
		return err
	}
	mean, worst, err := t.Model.QuantisationError(valSet, net, t.Config.Scale, 2000)
	if err != nil {
		return err
	}
	fmt.Fprintf(stdout, "epoch %d: quantised vs float on %d validation positions: mean %.2f cp, worst %.2f cp\n",
		t.Epoch, min(2000, len(valSet)/dataset.RecordSize), mean, worst)
	return os.WriteFile(file, b, 0o644)
}
