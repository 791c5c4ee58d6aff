//go:build !unix

package emulator

import (
	"os/exec"
)

func setProcessGroup(cmd *exec.Cmd) {}

func kill(cmd *exec.Cmd) error { return cmd.Process.Kill() }

// lockFile is a no-op: concurrent first runs may both run npm ci, which
// only wastes time.
func lockFile(path string) (func(), error) { return func() {}, nil }
