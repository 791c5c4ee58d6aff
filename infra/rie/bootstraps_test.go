package rie

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestBootstrapsPrebuilt(t *testing.T) {
	prebuilt := t.TempDir()
	for name, mode := range map[string]os.FileMode{"move": 0o755, "ai": 0o644} {
		if err := os.MkdirAll(filepath.Join(prebuilt, name), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(prebuilt, name, "bootstrap"), []byte("#!/bin/sh\n"), mode); err != nil {
			t.Fatal(err)
		}
	}
	b := NewBootstraps(t.TempDir(), prebuilt)
	defer b.Close()
	ctx := context.Background()
	if p, err := b.Path(ctx, "./functions/move"); err != nil || p != filepath.Join(prebuilt, "move", "bootstrap") {
		t.Errorf("Path(./functions/move) = %q, %v; want the prebuilt one", p, err)
	}
	// A function the prebuilt directory lacks, or cannot run, is an error,
	// not a quiet build of something else than what make built.
	if p, err := b.Path(ctx, "./functions/timeout"); err == nil || !strings.Contains(err.Error(), "build-native") {
		t.Errorf("Path(./functions/timeout) = %q, %v; want an error pointing at make build-native", p, err)
	}
	if p, err := b.Path(ctx, "./functions/ai"); err == nil || !strings.Contains(err.Error(), "not an executable") {
		t.Errorf("Path(./functions/ai) = %q, %v; want an error: not executable", p, err)
	}
}

func TestBootstrapsBuildOnce(t *testing.T) {
	if testing.Short() {
		t.Skip("builds a bootstrap; skipped with -short")
	}
	root, err := ModuleRoot(".")
	if err != nil {
		t.Fatal(err)
	}
	// A prebuilt directory holds ./functions only: anything else is built.
	b := NewBootstraps(root, t.TempDir())
	ctx := t.Context()
	const pkg = "./infra/rie/testdata/echo"
	first, err := b.Path(ctx, pkg)
	if err != nil {
		t.Fatal(err)
	}
	info, err := os.Stat(first)
	if err != nil {
		t.Fatal(err)
	}
	again, err := b.Path(ctx, pkg)
	if err != nil || again != first {
		t.Fatalf("second Path(%s) = %q, %v; want %q", pkg, again, err, first)
	}
	if info2, err := os.Stat(again); err != nil || !info2.ModTime().Equal(info.ModTime()) {
		t.Errorf("the second Path rebuilt %s (modified %v, then %v)", again, info.ModTime(), info2.ModTime())
	}
	if err := b.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(first); !os.IsNotExist(err) {
		t.Errorf("after Close, %s: %v; want it removed", first, err)
	}
}
