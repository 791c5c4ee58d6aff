package main

import (
	"bytes"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"chessapi/shared/chess"
	"chessapi/shared/engine/nnue"
	"chessapi/shared/engine/nnue/dataset"
)

// writeMaterialData writes n positions of random games scored by their
// material balance, with the result following the score's sign.
func writeMaterialData(t *testing.T, path string, seed uint64, n int) {
	t.Helper()
	value := [7]int16{chess.Pawn: 100, chess.Knight: 300, chess.Bishop: 300, chess.Rook: 500, chess.Queen: 900}
	rng := rand.New(rand.NewPCG(seed, 1))
	var buf bytes.Buffer
	w := dataset.NewWriter(&buf)
	for w.Count() < int64(n) {
		pos := chess.StartingPosition()
		for ply := 0; ply < 80 && w.Count() < int64(n); ply++ {
			moves := pos.LegalMoves()
			if len(moves) == 0 {
				break
			}
			pos.Play(moves[rng.IntN(len(moves))])
			if ply < 10 || rng.IntN(4) != 0 {
				continue
			}
			r := dataset.FromPosition(pos)
			for s := chess.Square(0); s < 64; s++ {
				if pc := pos.PieceAt(s); pc != chess.NoPiece && pc.Color() == pos.Turn() {
					r.Score += value[pc.Type()]
				} else if pc != chess.NoPiece {
					r.Score -= value[pc.Type()]
				}
			}
			switch {
			case r.Score > 150:
				r.Result = dataset.Win
			case r.Score < -150:
				r.Result = dataset.Loss
			default:
				r.Result = dataset.Draw
			}
			if err := w.Write(&r); err != nil {
				t.Fatal(err)
			}
		}
	}
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
}

var validationLoss = regexp.MustCompile(`(?m)^epoch (\d+): (?:train loss [0-9.]+, )?validation loss ([0-9.]+)`)

// TestTrainCommand trains the engine's network shape on a small material
// data set: the validation loss printed per epoch falls, every epoch's
// exported network loads in the engine, and a run resumed from the
// checkpoint ends with the same network as an uninterrupted one.
func TestTrainCommand(t *testing.T) {
	dir := t.TempDir()
	data := filepath.Join(dir, "material.bin")
	writeMaterialData(t, data, 1, 5000)
	args := func(out string, epochs int, extra ...string) []string {
		return append([]string{"-data", data, "-out", out, "-epochs", strconv.Itoa(epochs), "-batch", "256",
			"-lr", "0.01", "-lambda", "1", "-val", "0.2", "-threads", "2", "-seed", "4", "-scale", "150"}, extra...)
	}
	var out bytes.Buffer
	whole := filepath.Join(dir, "whole")
	if err := run(args(whole, 4), &out); err != nil {
		t.Fatalf("train: %v\n%s", err, out.String())
	}
	losses := map[int]float64{}
	for _, m := range validationLoss.FindAllStringSubmatch(out.String(), -1) {
		e, _ := strconv.Atoi(m[1])
		losses[e], _ = strconv.ParseFloat(m[2], 64)
	}
	if len(losses) != 5 || losses[4] >= losses[0]*0.6 {
		t.Errorf("validation losses by epoch %v; want epochs 0-4 and the last below 0.6 of the first\n%s", losses, out.String())
	}
	for e := 1; e <= 4; e++ {
		b, err := os.ReadFile(filepath.Join(whole, "epoch-"+strconv.Itoa(e)+".nnue"))
		if err != nil {
			t.Fatal(err)
		}
		if _, err := nnue.Load(b); err != nil {
			t.Errorf("epoch %d network: %v", e, err)
		}
	}

	part := filepath.Join(dir, "part")
	if err := run(args(part, 2), &bytes.Buffer{}); err != nil {
		t.Fatal(err)
	}
	if err := run(args(part, 4, "-resume", filepath.Join(part, "checkpoint.gob")), &bytes.Buffer{}); err != nil {
		t.Fatal(err)
	}
	a, _ := os.ReadFile(filepath.Join(whole, "epoch-4.nnue"))
	b, _ := os.ReadFile(filepath.Join(part, "epoch-4.nnue"))
	if len(a) == 0 || !bytes.Equal(a, b) {
		t.Errorf("resumed network (%d bytes) differs from the uninterrupted one (%d bytes)", len(b), len(a))
	}
}

// TestTrainFromInit goes on from an exported network with -init: the run's
// starting validation loss is the network's (not a random start's), the
// network's scale and shape are taken, and a -scale that differs is refused.
func TestTrainFromInit(t *testing.T) {
	dir := t.TempDir()
	data := filepath.Join(dir, "material.bin")
	writeMaterialData(t, data, 2, 5000)
	base := []string{"-data", data, "-batch", "256", "-lr", "0.01", "-lambda", "1", "-val", "0.2", "-threads", "2", "-seed", "4"}
	first := filepath.Join(dir, "first")
	var out bytes.Buffer
	if err := run(append(base, "-out", first, "-epochs", "4", "-scale", "150"), &out); err != nil {
		t.Fatalf("train: %v\n%s", err, out.String())
	}
	losses := func(s string) map[int]float64 {
		m := map[int]float64{}
		for _, g := range validationLoss.FindAllStringSubmatch(s, -1) {
			e, _ := strconv.Atoi(g[1])
			m[e], _ = strconv.ParseFloat(g[2], 64)
		}
		return m
	}
	trained := losses(out.String())
	net := filepath.Join(first, "epoch-4.nnue")
	out.Reset()
	if err := run(append(base, "-out", filepath.Join(dir, "second"), "-epochs", "1", "-init", net, "-lr", "0.001"), &out); err != nil {
		t.Fatalf("train -init: %v\n%s", err, out.String())
	}
	if !strings.Contains(out.String(), "scale 150") {
		t.Errorf("-init run does not use the network's scale 150:\n%s", out.String())
	}
	again := losses(out.String())
	if d := math.Abs(again[0] - trained[4]); d > 0.05*trained[4] {
		t.Errorf("-init run starts at validation loss %g; the network ended its run at %g (want within 5%%)\n%s", again[0], trained[4], out.String())
	}
	if again[0] >= 0.7*trained[0] {
		t.Errorf("-init run starts at %g, not below a random start's %g", again[0], trained[0])
	}
	for _, extra := range [][]string{{"-scale", "120"}, {"-hidden", "64"}, {"-resume", filepath.Join(first, "checkpoint.gob")}} {
		args := append(append(base, "-out", filepath.Join(dir, "bad"), "-epochs", "1", "-init", net), extra...)
		if err := run(args, &bytes.Buffer{}); err == nil || !strings.Contains(err.Error(), extra[0]) {
			t.Errorf("-init with %q: err = %v; want one naming %s", extra, err, extra[0])
		}
	}
}

func TestTrainFlagErrors(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"-out", "x"}, "-data"},
		{[]string{"-data", "x"}, "-out"},
		{[]string{"-data", "x", "-out", "y", "-val", "1"}, "-val"},
		{[]string{"-data", "x", "-out", "y", "-epochs", "0"}, "-epochs"},
		{[]string{"-data", "x", "-out", "y", "extra"}, "unexpected argument"},
	} {
		if _, err := parseFlags(tc.args); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("parseFlags(%q) = %v; want an error naming %s", tc.args, err, tc.want)
		}
	}
	if err := run([]string{"-data", filepath.Join(t.TempDir(), "none"), "-out", t.TempDir()}, &bytes.Buffer{}); err == nil || !strings.Contains(err.Error(), "-data") {
		t.Errorf("missing data file: err = %v; want one naming -data", err)
	}
}
