package rie

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
)

// Bootstraps hands out the bootstrap of each function package, building it
// (BuildBootstrap) the first time it is asked for and reusing it after:
// every test or command that runs functions under the emulator gets them
// through one of these, so a process builds each binary once.
//
// A directory built beforehand can stand in for the builds: the Makefile's
// build-native target writes bin/native/<name>/bootstrap for every
// ./functions/<name>, with the same flags, and `make test` hands that
// directory to the tests (see rietest), so under `make test` nothing is
// built twice and no test waits for a compile. Other packages are built.
type Bootstraps struct {
	root     string
	prebuilt string

	mu    sync.Mutex
	dir   string            // this one's builds, made on the first
	paths map[string]string // package -> bootstrap
}

// NewBootstraps returns the bootstraps of the module at root; prebuilt is
// a directory as build-native makes it, or "" to build everything.
func NewBootstraps(root, prebuilt string) *Bootstraps {
	return &Bootstraps{root: root, prebuilt: prebuilt, paths: map[string]string{}}
}

// Path returns the bootstrap of the main package pkg ("./functions/move",
// relative to the module root). ctx bounds a build; calls are serialised,
// so a second caller of the same package waits for the first's build.
// A failed build is tried again by the next call.
func (b *Bootstraps) Path(ctx context.Context, pkg string) (string, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if p, ok := b.paths[pkg]; ok {
		return p, nil
	}
	if p, ok, err := b.prebuiltPath(pkg); err != nil {
		return "", err
	} else if ok {
		b.paths[pkg] = p
		return p, nil
	}
	if b.dir == "" {
		dir, err := os.MkdirTemp("", "bootstraps-")
		if err != nil {
			return "", fmt.Errorf("rie: %w", err)
		}
		b.dir = dir
	}
	out := filepath.Join(b.dir, strings.ReplaceAll(strings.Trim(filepath.ToSlash(filepath.Clean(pkg)), "./"), "/", "_"))
	if err := os.MkdirAll(out, 0o755); err != nil {
		return "", fmt.Errorf("rie: %w", err)
	}
	p, err := BuildBootstrap(ctx, b.root, pkg, out)
	if err != nil {
		return "", err
	}
	b.paths[pkg] = p
	return p, nil
}

// prebuiltPath finds pkg in the prebuilt directory: ./functions/<name> as
// <name>/bootstrap. A function missing there is an error, not a build: the
// directory was meant to hold them all.
func (b *Bootstraps) prebuiltPath(pkg string) (string, bool, error) {
	name, ok := strings.CutPrefix(filepath.ToSlash(filepath.Clean(pkg)), "functions/")
	if b.prebuilt == "" || !ok || strings.Contains(name, "/") {
		return "", false, nil
	}
	p := filepath.Join(b.prebuilt, name, "bootstrap")
	info, err := os.Stat(p)
	if err != nil {
		return "", false, fmt.Errorf("rie: the prebuilt bootstrap of %s: %w (make build-native writes it)", pkg, err)
	}
	if info.IsDir() || info.Mode()&0o111 == 0 {
		return "", false, fmt.Errorf("rie: the prebuilt bootstrap of %s, %s, is not an executable file", pkg, p)
	}
	return p, true, nil
}

// Close removes what this one built (never the prebuilt directory).
func (b *Bootstraps) Close() error {
	b.mu.Lock()
	defer b.mu.Unlock()
	clear(b.paths)
	if b.dir == "" {
		return nil
	}
	err := os.RemoveAll(b.dir)
	b.dir = ""
	return err
}
