//go:build unix

package emulator

import (
	"fmt"
	"os"
	"os/exec"
	"syscall"
)

// kill sends SIGKILL to the server's process group: moto_server may be a
// shim script that runs Python as a child, and the whole tree must go. The
// group id equals the leader's pid (setProcessGroup made it leader).
func kill(cmd *exec.Cmd) error {
	err := syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
	if err != nil && err != syscall.ESRCH {
		return fmt.Errorf("kill process group %d: %w", cmd.Process.Pid, err)
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
