#!/usr/sbin/dtrace -s
/*
 * Count reads by size class: the if/else chain is rewritten into
 * predicated clauses, which kdtrace -d shows.
 */
#pragma D option quiet

syscall::read:entry
/execname != "kdtrace"/
{
	if (arg2 < 512) {
		@reads["small"] = count();
	} else if (arg2 < 65536) {
		@reads["medium"] = count();
	} else {
		@reads["large"] = count();
	}
}
