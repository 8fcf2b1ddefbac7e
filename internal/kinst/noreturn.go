package kinst

// noReturn lists the kernel's functions declared __noreturn that
// compilers call without anything after the call being reachable; the
// code that follows such a call belongs to another path. The names are
// those objtool knows for Linux 6.1 (tools/objtool/check.c), since a
// vmlinux's symbol table does not say which functions return.
var noReturn = map[string]bool{
	"__invalid_creds":                    true,
	"__module_put_and_kthread_exit":      true,
	"__reiserfs_panic":                   true,
	"__stack_chk_fail":                   true,
	"__ubsan_handle_builtin_unreachable": true,
	"cpu_bringup_and_idle":               true,
	"cpu_startup_entry":                  true,
	"do_exit":                            true,
	"do_group_exit":                      true,
	"do_task_dead":                       true,
	"ex_handler_msr_mce":                 true,
	"fortify_panic":                      true,
	"kthread_complete_and_exit":          true,
	"kthread_exit":                       true,
	"kunit_try_catch_throw":              true,
	"lbug_with_loc":                      true,
	"machine_real_restart":               true,
	"make_task_dead":                     true,
	"panic":                              true,
	"rewind_stack_and_make_dead":         true,
	"sev_es_terminate":                   true,
	"snp_abort":                          true,
	"stop_this_cpu":                      true,
	"usercopy_abort":                     true,
	"xen_cpu_bringup_again":              true,
	"xen_start_kernel":                   true,
}

// noReturnIn returns the test NewFunctionNoReturn wants for code of the
// given module: whether the function symbol at a call's target is one
// that never returns.
func (r *Resolver) noReturnIn(module string) func(uint64) bool {
	return func(target uint64) bool {
		sym, ok := r.Set.SymbolAt(module, target)
		return ok && sym.Addr == target && noReturn[sym.Name]
	}
}
