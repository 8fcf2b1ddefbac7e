struct fwd_only {
	int a;
	long b;
};
