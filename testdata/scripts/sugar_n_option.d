/* args: -n syscall::read:entry/pid==1/{if(arg0)x=1;else{x=2;}} */
