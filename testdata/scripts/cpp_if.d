/* args: -C -DLEVEL=2 */
#define SQUARE(v) ((v) * (v))
#if LEVEL > 1
BEGIN
{
	x = SQUARE(y);
}
#elif LEVEL == 1
BEGIN { x = 1; }
#else
#error level too low
#endif

#if defined(__SUNW_D_VERSION) && __SUNW_D_VERSION >= 0x01000000
END
{
	v = __SUNW_D_VERSION;
}
#endif
