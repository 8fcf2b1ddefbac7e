package kinst

// isNoReturn reports whether name is one of the kernel's functions
// declared __noreturn that compilers call without anything after the
// call being reachable; the code that follows such a call belongs to
// another path. The names are those objtool knows for Linux 6.1
// (tools/objtool/check.c), since a vmlinux's symbol table does not say
// which functions return. A switch, not a map, so that it costs nothing
// at start-up.
func isNoReturn(name string) bool {
	switch name {
	case "__invalid_creds", "__module_put_and_kthread_exit",
		"__reiserfs_panic", "__stack_chk_fail",
		"__ubsan_handle_builtin_unreachable", "cpu_bringup_and_idle",
		"cpu_startup_entry", "do_exit", "do_group_exit", "do_task_dead",
		"ex_handler_msr_mce", "fortify_panic", "kthread_complete_and_exit",
		"kthread_exit", "kunit_try_catch_throw", "lbug_with_loc",
		"machine_real_restart", "make_task_dead", "panic",
		"rewind_stack_and_make_dead", "sev_es_terminate", "snp_abort",
		"stop_this_cpu", "usercopy_abort", "xen_cpu_bringup_again",
		"xen_start_kernel":
		return true
	}
	return false
}

// noReturnIn returns the test NewFunctionNoReturn wants for code of the
// given module: whether the function symbol at a call's target is one
// that never returns.
func (r *Resolver) noReturnIn(module string) func(uint64) bool {
	return func(target uint64) bool {
		sym, ok := r.Set.SymbolAt(module, target)
		return ok && sym.Addr == target && isNoReturn(sym.Name)
	}
}
