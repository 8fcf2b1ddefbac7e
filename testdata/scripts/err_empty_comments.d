/* nothing but comments and a pragma */
#pragma D option quiet
