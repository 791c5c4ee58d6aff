//go:build unix

package emulator

import (
	"fmt"
	"os"
	"os/exec"
	"syscall"
)

// terminate sends SIGTERM to the server's process group: moto_server may be
// a shim script that runs Python as a child, and the whole tree must go.
func terminate(cmd *exec.Cmd) error {
	return signalGroup(cmd, syscall.SIGTERM)
}

// kill sends SIGKILL to the server's process group.
func kill(cmd *exec.Cmd) error {
	return signalGroup(cmd, syscall.SIGKILL)
}

func signalGroup(cmd *exec.Cmd, sig syscall.Signal) error {
	// The group id equals the leader's pid (setProcessGroup made it leader).
	err := syscall.Kill(-cmd.Process.Pid, sig)
	if err != nil && err != syscall.ESRCH {
		return fmt.Errorf("signal %v to process group %d: %w", sig, cmd.Process.Pid, err)
	}
	return nil
}

// lockFile takes an exclusive flock on path, creating it, and returns the
// function that releases it. The lock is released by the kernel if the
// holder dies, so a killed test binary never leaves a stale lock.
func lockFile(path string) (func(), error) {
	f, err := os.OpenFile(path, os.O_CREATE|os.O_RDWR, 0o644)
	if err != nil {
		return nil, fmt.Errorf("open lock file: %w", err)
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX); err != nil {
		f.Close()
		return nil, fmt.Errorf("lock %s: %w", path, err)
	}
	return func() {
		_ = syscall.Flock(int(f.Fd()), syscall.LOCK_UN)
		f.Close()
	}, nil
}
