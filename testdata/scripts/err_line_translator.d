/* dt_node_xlator checks a translator after its final ";", on line 10. */
struct out {
	int o;
};

translator struct out < int *p >
{
	nosuch = *p;
}
;
