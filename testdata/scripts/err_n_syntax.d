/* args: -n BEGIN{x=1+;} */
