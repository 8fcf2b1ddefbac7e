/*
 * "__" in probe names: each pair becomes '-', scanning from the left, so
 * a___b is a-_b and a____b is a--b; uppercase letters are kept in stub
 * names and '_' alone is left as is. The '-' sorts before '_' and
 * letters. a___b and a____b both give the macro MY_APP_A__B, as they do
 * in dtrace.
 */
provider my_app {
	probe txn__commit__done(int);
	probe txn__begin();
	probe txn_abort();
	probe a___b();
	probe a____b();
	probe CamelCase__Probe(int, int);
	probe __lead();
};
