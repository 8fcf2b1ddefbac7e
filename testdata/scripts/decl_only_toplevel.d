inline int ONLY = 1;
