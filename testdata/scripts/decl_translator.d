struct in_info {
	int i_a;
	int i_b;
};

struct out_info {
	int o_sum;
	int o_a;
};

translator struct out_info < struct in_info *ip > {
	o_sum = ip->i_a + ip->i_b;
	o_a = ip->i_a;
};

translator struct out_info < int *ip > {
};

BEGIN
{
	x = xlate < struct out_info > ((struct in_info *)arg0).o_sum;
	y = xlate<struct out_info *>((struct in_info *)arg1);
}
