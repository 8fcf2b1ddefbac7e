/* args: -s $FILE read entry */
syscall::$1:$2
{
	trace($$1);
}
