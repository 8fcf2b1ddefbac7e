/* args: -n return -n entry,return{} -n BEGIN_END,tick-1s{} */
