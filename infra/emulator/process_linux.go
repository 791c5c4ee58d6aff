//go:build linux

package emulator

import (
	"os/exec"
	"syscall"
)

// setProcessGroup puts the server in its own process group (so it can be
// stopped with its children) and asks the kernel to kill it if the test
// binary dies without running its cleanups (a panic, a SIGKILL, a -timeout).
func setProcessGroup(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
}
