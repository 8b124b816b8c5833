package redistest

import "syscall"

// sysProcAttr asks the kernel to kill redis-server if the test binary dies
// without running cleanups (panic, -timeout), so no servers are left behind.
func sysProcAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
}
