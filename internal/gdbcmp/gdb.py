# gdbcmp's reader, run inside gdb -batch: it stops at each stop's first
# execution and writes to the file GDBCMP_OUT names, for the variables in scope there (innermost block
# first, the inlined copies' and then their callers'), what gdb reads.
# Lines start with @@:
#   @@STOP i               stop i was reached (what follows is its)
#   @@VAR name size hex p  a scalar (integer, pointer, enum, bool, char);
#                          p is 1 for a parameter of the function itself
#   @@OPT name             <optimized out>
#   @@SKIP name type       a type locals-> values are not compared for
#   @@ERR name message     gdb could not read it
#   @@PROLOGUE i addr      where `break FUNC` would stop (after the prologue)
import gdb
import json
import os

stops = json.loads(os.environ["GDBCMP_STOPS"])
out = open(os.environ["GDBCMP_OUT"], "w")


def put(s):
    print(s, file=out)

SCALAR = (gdb.TYPE_CODE_INT, gdb.TYPE_CODE_ENUM, gdb.TYPE_CODE_BOOL,
          gdb.TYPE_CODE_CHAR, gdb.TYPE_CODE_PTR)
AGGREGATE = (gdb.TYPE_CODE_STRUCT, gdb.TYPE_CODE_UNION)


def emit(name, val, param, depth=0):
    try:
        val.fetch_lazy()
        if val.is_optimized_out:
            put("@@OPT %s" % name)
            return
        t = val.type.strip_typedefs()
        if t.code in SCALAR and val.format_string() in ("<optimized out>", "<synthetic pointer>"):
            # A piece with no location: gdb 13 says "synthetic pointer"
            # of a member of a struct whose other pieces it has.
            put("@@OPT %s" % name)
            return
        if t.code in SCALAR:
            v = int(val) & ((1 << (8 * t.sizeof)) - 1)
            put("@@VAR %s %d %x %d" % (name, t.sizeof, v, param))
        elif t.code in AGGREGATE and depth < 3:
            for f in t.fields():
                if f.bitsize or not f.name or f.artificial:
                    continue
                emit(name + "." + f.name, val[f], param, depth + 1)
        else:
            put("@@SKIP %s %s" % (name, str(val.type).replace(" ", "_")))
    except gdb.error as e:
        put("@@ERR %s %s" % (name, str(e).replace("\n", " ")))


def dump(i):
    put("@@STOP %d" % i)
    fr = gdb.selected_frame()
    seen = set()
    while fr is not None:
        try:
            blk = fr.block()
        except RuntimeError:
            break
        while blk is not None:
            for sym in blk:
                if not (sym.is_argument or sym.is_variable) or sym.name in seen:
                    continue
                seen.add(sym.name)
                param = sym.is_argument and fr.type() != gdb.INLINE_FRAME
                emit(sym.name, sym.value(fr), int(param))
            if blk.function is not None:
                break
            blk = blk.superblock
        if fr.type() != gdb.INLINE_FRAME:
            break
        fr = fr.older()


gdb.execute("starti", to_string=True)
at = {}
for i, (fn, off) in enumerate(stops):
    base = int(gdb.parse_and_eval("(unsigned long)&%s" % fn))
    at.setdefault(base + off, []).append(i)
    # Where gdb's own `break fn` goes: past the prologue.
    bp = gdb.Breakpoint(fn, internal=True)
    if bp.locations:
        put("@@PROLOGUE %d %x" % (i, bp.locations[0].address - base))
    bp.delete()
for a in at:
    gdb.Breakpoint("*%#x" % a, internal=True, temporary=True)
pending = set(range(len(stops)))
while pending:
    try:
        gdb.execute("continue", to_string=True)
    except gdb.error:
        break
    if gdb.selected_inferior().pid == 0:
        break
    for i in at.get(gdb.selected_frame().pc(), []):
        if i in pending:
            dump(i)
            pending.discard(i)
if gdb.selected_inferior().pid != 0:
    gdb.execute("kill", to_string=True)
out.close()
