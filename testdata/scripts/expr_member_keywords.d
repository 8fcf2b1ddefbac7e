/*
 * D reserves counter and import without giving them a meaning; Linux
 * structs use them as member names (atomic_t's counter).
 */
BEGIN
{
	this->v = (struct s *)arg0;
	x = this->v->counter + this->v->import;
}
