/*
 * One provider with several probes, declared out of order: dtrace sorts
 * them by name. query__start becomes the probe query-start. connect(void)
 * is declared with a stray ", " after void, as dt_header_decl prints it;
 * disconnect() is the way to write a probe without arguments.
 */
provider myapp {
	probe query__start(char *query, int flags);
	probe query__done(char *, int, long status);
	probe connect(void);
	probe disconnect();
	probe tick(unsigned long long ts);
};
