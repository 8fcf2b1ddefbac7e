/* args: -C -I ../../testdata/scripts/inc */
#include "defs.h"
#include <defs.h>

PROBE
/arg0 < LIMIT/
{
	x = TWICE(arg0);
	y = FROM_HEADER;
}
