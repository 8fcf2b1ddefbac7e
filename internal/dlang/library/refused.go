package library

// Refused returns the names that the D libraries of illumos and Oracle
// Linux define and kdtrace's own for goos leave out on purpose, each
// with why, for check.Checker.Refuse: the pr_flag bits that describe
// /proc's control of a process, Solaris's threads library, or state
// Linux does not keep. procfs.d defines the bits Linux can honour.
// There are none for FreeBSD, whose libraries are the system's.
func Refused(goos string) map[string]string {
	if goos != "linux" {
		return nil
	}
	const (
		proc    = "Linux has no /proc control of a process"
		threads = "Linux has no Solaris threads library"
		state   = "Linux does not keep this state of a process"
	)
	why := map[string]string{
		"PR_DSTOP": proc, "PR_STEP": proc, "PR_PCINVAL": proc, "PR_AGENT": proc,
		"PR_FORK": proc, "PR_RLC": proc, "PR_KLC": proc, "PR_ASYNC": proc,
		"PR_MSACCT": proc, "PR_BPTADJ": proc, "PR_MSFORK": proc,
		"PR_ASLWP": threads, "PR_DETACH": threads, "PR_DAEMON": threads,
		"PR_VFORKP": state, "PR_ORPHAN": state, "PR_NOSIGCHLD": state, "PR_WAITPID": state,
	}
	for name, reason := range why {
		why[name] = name + " is not defined on Linux: " + reason
	}
	return why
}
