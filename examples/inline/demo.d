/*
 * valid() is inlined into get() and put() and also called through a
 * pointer. kdtrace rewrites its entry and return probes into one probe
 * at each inline copy's entry and final exits (caller+offset, the
 * offset in hex as the pid provider names it) and keeps the
 * out-of-line copy's own entry and return: kdtrace -e -d shows them.
 *
 *	kdtrace -c examples/inline/demo -s examples/inline/demo.d
 */
#pragma D option quiet

pid$target:a.out:valid:entry
{
	@entries[probefunc, probename] = count();
	@calls["entries"] = count();
}

pid$target:a.out:valid:return
{
	@returns[probefunc, probename] = count();
	@calls["returns"] = count();
}

END
{
	printf("\nvalid() entries, by site (caller and hex offset; \"entry\" is the out-of-line copy):\n");
	printa("  %-8s %-8s %@6d\n", @entries);
	printf("valid() returns, by site:\n");
	printa("  %-8s %-8s %@6d\n", @returns);
	printf("valid() in all:\n");
	printa("  %-17s %@6d\n", @calls);
}
