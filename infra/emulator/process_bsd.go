//go:build unix && !linux

package emulator

import (
	"os/exec"
	"syscall"
)

// setProcessGroup puts the server in its own process group so it can be
// stopped with its children. (No parent-death signal outside Linux: a test
// binary killed hard may leave the server running.)
func setProcessGroup(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
}
