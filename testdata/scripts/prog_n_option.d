/* args: -n BEGIN{x=1;trace(x)} -n END -n syscall::read:entry,syscall::write:entry/arg0>2/{@[probefunc]=count();} */
