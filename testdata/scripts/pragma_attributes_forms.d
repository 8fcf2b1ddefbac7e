/*
 * #pragma D attributes names an identifier, or one part of a provider;
 * #pragma D binding may version the file's translators.
 */
#pragma D attributes Evolving/Evolving/ISA provider sched provider
#pragma D attributes Stable/Stable/Common provider sched args
#pragma D binding "1.0" translator
inline int X = 1;
#pragma D attributes Stable/Stable/Common X

BEGIN
{
	trace(X);
}
