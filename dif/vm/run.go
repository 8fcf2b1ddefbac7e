package vm

import (
	"math"

	"github.com/kdtrace/kdtrace/dif"
)

// Run executes a DIFO as dtrace_dif_emulate does and returns the value
// of its ret: an integer, or for a by-reference return type the address
// of the bytes (read them with ReadMemory or ReadString). ctx may be
// nil, a firing whose built-in variables are all zero.
//
// The first time it meets o, Run validates it as the kernel validates a
// DIFO it loads (dif.Validator, the kernel's checks, with the variables
// of the DIFOs run before) and keeps a copy, found again by the pointer:
// later changes to o are not seen, and a program's DIFOs are best run
// through the same pointers (a enabling.Program's) rather than fresh
// copies, each of which the machine would keep. A fault stops the DIFO with a *Fault; a subroutine the machine
// cannot run stops it with an *UnsupportedError.
func (m *Machine) Run(o *dif.Object, ctx *Context) (uint64, error) {
	p, err := m.prepare(o)
	if err != nil {
		return 0, err
	}
	if ctx == nil {
		ctx = &Context{}
	}
	return m.exec(p, ctx)
}

func (m *Machine) exec(p *prog, ctx *Context) (uint64, error) {
	// Validation keeps registers below dif.NRegs; the array covers every
	// encodable register all the same.
	var regs [dif.MaxRegister + 1]uint64
	var tup [dif.NTupleRegs + 2]tuple
	ttop := 0
	var ccN, ccZ, ccV, ccC bool
	code := p.code
	for pc := 0; pc < len(code); {
		opc := pc
		in := code[pc]
		pc++
		r1, r2, rd := in.R1(), in.R2(), in.RD()
		var err error
		switch op := in.Op(); op {
		case dif.OR:
			regs[rd] = regs[r1] | regs[r2]
		case dif.XOR:
			regs[rd] = regs[r1] ^ regs[r2]
		case dif.AND:
			regs[rd] = regs[r1] & regs[r2]
		case dif.SLL:
			// A shift count is taken modulo 64, as the amd64 kernel's
			// shl does.
			regs[rd] = regs[r1] << (regs[r2] & 63)
		case dif.SRL:
			regs[rd] = regs[r1] >> (regs[r2] & 63)
		case dif.SRA:
			regs[rd] = uint64(int64(regs[r1]) >> (regs[r2] & 63))
		case dif.SUB:
			regs[rd] = regs[r1] - regs[r2]
		case dif.ADD:
			regs[rd] = regs[r1] + regs[r2]
		case dif.MUL:
			regs[rd] = regs[r1] * regs[r2]
		case dif.SDIV, dif.UDIV, dif.SREM, dif.UREM:
			regs[rd], err = divide(op, regs[r1], regs[r2])
		case dif.NOT:
			regs[rd] = ^regs[r1]
		case dif.MOV:
			regs[rd] = regs[r1]

		case dif.CMP:
			// The signed conditions follow the sign of the difference
			// alone (cc_v is always 0), as the kernel computes them.
			d := int64(regs[r1] - regs[r2])
			ccN, ccZ, ccV, ccC = d < 0, d == 0, false, regs[r1] < regs[r2]
		case dif.TST:
			ccN, ccZ, ccV, ccC = false, regs[r1] == 0, false, false
		case dif.SCMP:
			var r int
			if r, err = m.scmp(regs[r1], regs[r2]); err == nil {
				ccN, ccZ, ccV, ccC = r < 0, r == 0, false, false
			}

		case dif.BA, dif.BE, dif.BNE, dif.BG, dif.BGU, dif.BGE, dif.BGEU,
			dif.BL, dif.BLU, dif.BLE, dif.BLEU:
			if taken(op, ccN, ccZ, ccV, ccC) {
				pc = int(in.Label())
			}

		case dif.RLDSB, dif.RLDSH, dif.RLDSW, dif.RLDUB, dif.RLDUH, dif.RLDUW, dif.RLDX:
			size, _ := loadWidth(op)
			if err = m.canload(regs[r1], size); err == nil {
				regs[rd], err = m.loadOp(op, regs[r1])
			}
		case dif.LDSB, dif.LDSH, dif.LDSW, dif.LDUB, dif.LDUH, dif.LDUW, dif.LDX,
			dif.ULDSB, dif.ULDSH, dif.ULDSW, dif.ULDUB, dif.ULDUH, dif.ULDUW, dif.ULDX:
			regs[rd], err = m.loadOp(op, regs[r1])

		case dif.STB, dif.STH, dif.STW, dif.STX:
			err = m.storeOp(op, regs[r1], regs[rd])

		case dif.RET:
			return regs[rd], nil
		case dif.NOP:
		case dif.SETX:
			regs[rd] = p.ints[in.Index()]
		case dif.SETS:
			regs[rd] = p.strs + uint64(in.Index())

		case dif.LDGA:
			regs[rd], err = m.variable(ctx, uint32(r1), regs[r2])
		case dif.LDTA:
			// No built-in thread-local arrays exist.
			err = fault(FaultIllOp, 0)
		case dif.LDGS:
			id := uint32(in.Var())
			if id < dif.VarOtherUBase {
				regs[rd], err = m.variable(ctx, id, 0)
				break
			}
			regs[rd], err = m.loadStatic(dif.ScopeGlobal, id)
		case dif.LDLS:
			id := uint32(in.Var())
			if id < dif.VarOtherUBase {
				regs[rd] = 0
				break
			}
			regs[rd], err = m.loadStatic(dif.ScopeLocal, id)
		case dif.STGS:
			err = m.storeStatic(dif.ScopeGlobal, uint32(in.Var()), regs[rd])
		case dif.STLS:
			err = m.storeStatic(dif.ScopeLocal, uint32(in.Var()), regs[rd])
		case dif.LDTS:
			regs[rd], err = m.loadDyn(dif.ScopeThread, uint32(in.Var()), nil)
		case dif.STTS:
			err = m.storeDyn(dif.ScopeThread, uint32(in.Var()), nil, regs[rd])
		case dif.LDGAA:
			regs[rd], err = m.loadDyn(dif.ScopeGlobal, uint32(in.Var()), tup[:ttop])
		case dif.LDTAA:
			regs[rd], err = m.loadDyn(dif.ScopeThread, uint32(in.Var()), tup[:ttop])
		case dif.STGAA:
			err = m.storeDyn(dif.ScopeGlobal, uint32(in.Var()), tup[:ttop], regs[rd])
		case dif.STTAA:
			err = m.storeDyn(dif.ScopeThread, uint32(in.Var()), tup[:ttop], regs[rd])

		case dif.CALL:
			err = m.call(in.Subr(), &regs[rd], tup[:ttop], ctx)

		case dif.PUSHTR:
			if ttop == dif.NTupleRegs {
				err = fault(FaultTupOFlow, 0)
				break
			}
			var size uint64
			if r1 == dif.TypeString {
				lim := regs[r2]
				if lim == 0 {
					lim = strSizeDefault
				}
				if size, err = m.strlen(regs[rd], lim); err != nil {
					break
				}
				size++
			} else {
				if regs[r2] > math.MaxInt64 {
					err = fault(FaultIllOp, 0)
					break
				}
				size = regs[r2]
			}
			tup[ttop] = tuple{value: regs[rd], size: size}
			ttop++
		case dif.PUSHTV:
			if ttop == dif.NTupleRegs {
				err = fault(FaultTupOFlow, 0)
				break
			}
			tup[ttop] = tuple{value: regs[rd]}
			ttop++
		case dif.POPTS:
			if ttop != 0 {
				ttop--
			}
		case dif.FLUSHTS:
			ttop = 0

		case dif.ALLOCS:
			regs[rd], err = m.allocs(regs[r1])
		case dif.COPYS:
			err = m.copys(regs[r1], regs[r2], regs[rd])

		case dif.XLATE, dif.XLARG:
			err = unsupported("translator reference " + op.String())
		default:
			err = fault(FaultIllOp, 0)
		}
		regs[0] = 0
		if err != nil {
			return 0, locate(err, opc, in)
		}
	}
	return 0, nil
}

func divide(op dif.Op, a, b uint64) (uint64, error) {
	if b == 0 {
		return 0, fault(FaultDivZero, 0)
	}
	switch op {
	case dif.SDIV:
		return uint64(int64(a) / int64(b)), nil
	case dif.UDIV:
		return a / b, nil
	case dif.SREM:
		return uint64(int64(a) % int64(b)), nil
	}
	return a % b, nil
}

// taken decides a branch from the condition codes as the kernel does.
func taken(op dif.Op, n, z, v, c bool) bool {
	switch op {
	case dif.BA:
		return true
	case dif.BE:
		return z
	case dif.BNE:
		return !z
	case dif.BG:
		return !(z || n != v)
	case dif.BGU:
		return !(c || z)
	case dif.BGE:
		return n == v
	case dif.BGEU:
		return !c
	case dif.BL:
		return n != v
	case dif.BLU:
		return c
	case dif.BLE:
		return z || n != v
	case dif.BLEU:
		return c || z
	}
	return false
}

// loadWidth returns the size of a load and whether it sign-extends.
func loadWidth(op dif.Op) (uint64, bool) {
	switch op {
	case dif.LDSB, dif.RLDSB, dif.ULDSB:
		return 1, true
	case dif.LDSH, dif.RLDSH, dif.ULDSH:
		return 2, true
	case dif.LDSW, dif.RLDSW, dif.ULDSW:
		return 4, true
	case dif.LDUB, dif.RLDUB, dif.ULDUB:
		return 1, false
	case dif.LDUH, dif.RLDUH, dif.ULDUH:
		return 2, false
	case dif.LDUW, dif.RLDUW, dif.ULDUW:
		return 4, false
	}
	return 8, false
}

// loadOp performs a load of any width from kernel memory (ld*, rld*)
// or user memory (uld*). The kernel on amd64 does not check alignment.
func (m *Machine) loadOp(op dif.Op, addr uint64) (uint64, error) {
	size, signed := loadWidth(op)
	var b []byte
	var err error
	if op >= dif.ULDSB && op <= dif.ULDX {
		b, err = m.readUser(addr, size)
	} else {
		b, err = m.read(addr, size)
	}
	if err != nil {
		return 0, err
	}
	v := le(b)
	if signed {
		shift := 64 - 8*size
		v = uint64(int64(v<<shift) >> shift)
	}
	return v, nil
}

// storeOp performs stb, sth, stw or stx: only to scratch or variables,
// and aligned.
func (m *Machine) storeOp(op dif.Op, v, addr uint64) error {
	size := uint64(8)
	switch op {
	case dif.STB:
		size = 1
	case dif.STH:
		size = 2
	case dif.STW:
		size = 4
	}
	if !m.canstore(addr, size) {
		return fault(FaultBadAddr, addr)
	}
	if addr&(size-1) != 0 {
		return fault(FaultBadAlign, addr)
	}
	var b [8]byte
	putLE(b[:size], v)
	return m.store(addr, b[:size])
}

// scmp compares two strings (DIF_OP_SCMP): of at most the string size,
// a zero address being the empty string.
func (m *Machine) scmp(s1, s2 uint64) (int, error) {
	sz := uint64(m.cfg.StrSize)
	lim1, lim2 := uint64(1), uint64(1)
	var err error
	if s1 != 0 {
		if lim1, err = m.strcanload(s1, sz); err != nil {
			return 0, err
		}
	}
	if s2 != 0 {
		if lim2, err = m.strcanload(s2, sz); err != nil {
			return 0, err
		}
	}
	return m.strncmp(s1, s2, min(lim1, lim2))
}

// loadStatic reads a global or clause-local: its value, or for a
// by-reference variable the address of its storage (0 after a store of
// NULL).
func (m *Machine) loadStatic(scope uint8, id uint32) (uint64, error) {
	t := m.varType(scope, id)
	if !byRef(t) {
		if scope == dif.ScopeLocal {
			return m.locals[id], nil
		}
		return m.globals[id], nil
	}
	s, err := m.static(scope, id, t)
	if err != nil || s.null {
		return 0, err
	}
	return s.addr, nil
}

// storeStatic writes a global or clause-local; a by-reference store
// copies the bytes v refers to (a string up to its NUL).
func (m *Machine) storeStatic(scope uint8, id uint32, v uint64) error {
	t := m.varType(scope, id)
	if !byRef(t) {
		if scope == dif.ScopeLocal {
			m.locals[id] = v
		} else {
			m.globals[id] = v
		}
		return nil
	}
	s, err := m.static(scope, id, t)
	if err != nil {
		return err
	}
	if v == 0 {
		s.null = true
		return nil
	}
	s.null = false
	return m.vcopy(v, s.data, t)
}

// vcopy copies a by-reference value into a variable's storage
// (dtrace_vcanload, dtrace_vcopy).
func (m *Machine) vcopy(src uint64, dst []byte, t dif.Type) error {
	if t.Kind == dif.TypeString {
		lim, err := m.strcanload(src, uint64(m.cfg.StrSize))
		if err != nil {
			return err
		}
		n := min(uint64(t.Size), lim, uint64(len(dst)))
		for i := uint64(0); i < n; i++ {
			c, err := m.load8(src + i)
			if err != nil {
				return err
			}
			dst[i] = c
			if c == 0 {
				break
			}
		}
		return nil
	}
	n := min(uint64(t.Size), uint64(len(dst)))
	if err := m.canload(src, n); err != nil {
		return err
	}
	b, err := m.read(src, n)
	if err != nil {
		return err
	}
	copy(dst, b)
	return nil
}

// dynSize is the size of a dynamic variable's storage: at least 8 bytes.
func dynSize(t dif.Type) uint64 { return max(uint64(t.Size), 8) }

// loadDyn reads a thread-local or an associative array element: 0 if it
// does not exist, else its value or for a by-reference type the address
// of its storage.
func (m *Machine) loadDyn(scope uint8, id uint32, keys []tuple) (uint64, error) {
	t := m.varType(scope, id)
	k, err := m.dynKey(scope, id, keys)
	if err != nil {
		return 0, err
	}
	d := m.dynvar(k, dynSize(t), dynNoAlloc)
	if d == nil {
		return 0, nil
	}
	if byRef(t) {
		return d.addr, nil
	}
	return le(d.data[:8]), nil
}

// storeDyn writes a thread-local or an associative array element; a
// store of zero deletes it.
func (m *Machine) storeDyn(scope uint8, id uint32, keys []tuple, v uint64) error {
	t := m.varType(scope, id)
	k, err := m.dynKey(scope, id, keys)
	if err != nil {
		return err
	}
	op := dynAlloc
	if v == 0 {
		op = dynDealloc
	}
	d := m.dynvar(k, dynSize(t), op)
	if d == nil {
		return nil
	}
	if byRef(t) {
		return m.vcopy(v, d.data, t)
	}
	putLE(d.data[:8], v)
	return nil
}

// allocs allocates n zeroed bytes of scratch, 8-aligned.
func (m *Machine) allocs(n uint64) (uint64, error) {
	ptr := (m.scratchPtr + 7) &^ 7
	size := ptr - m.scratchPtr + n
	if size < n || !m.inScratch(size) {
		return 0, fault(FaultNoScratch, 0)
	}
	clear(m.scratch[m.scratchPtr : m.scratchPtr+size])
	m.scratchPtr += size
	return m.scratchBase() + ptr, nil
}

// copys copies n bytes from src to dst, which must be memory DIF may
// store to.
func (m *Machine) copys(src, n, dst uint64) error {
	if !m.canstore(dst, n) {
		return fault(FaultBadAddr, dst)
	}
	if err := m.canload(src, n); err != nil {
		return err
	}
	b, err := m.readPast(src, n)
	if err != nil {
		return err
	}
	return m.store(dst, b)
}
