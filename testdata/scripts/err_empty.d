/* only a declaration */
int x;
