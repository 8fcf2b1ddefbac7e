/* userland is not a keyword of the outer scope, as in dtrace: the word is a probe description. */
userland int *up;
