package vm

import (
	"math"

	"github.com/kdtrace/kdtrace/dif"
)

// Address families for inet_ntop(): AF_INET6 as FreeBSD numbers it,
// and as Linux does.
const (
	afInet       = 2
	afInet6      = 28
	afInet6Linux = 10

	inetAddrStrLen  = 16 // INET_ADDRSTRLEN
	inet6AddrStrLen = 46 // INET6_ADDRSTRLEN
	memstrMax       = 4096
)

// call runs a subroutine (dtrace_dif_subr) with the tuple stack as its
// arguments; rd is the destination register, which some subroutines
// leave alone.
func (m *Machine) call(subr uint16, rd *uint64, args []tuple, ctx *Context) error {
	arg := func(i int) uint64 {
		if i < len(args) {
			return args[i].value
		}
		return 0
	}
	strsize := uint64(m.cfg.StrSize)

	switch subr {
	case dif.SubrRand:
		*rd = m.rand()

	case dif.SubrBcopy:
		src, dest, size := arg(0), arg(1), arg(2)
		if !m.inScratchRange(dest, size) {
			return fault(FaultBadAddr, dest)
		}
		if err := m.canload(src, size); err != nil {
			return err
		}
		b, err := m.read(src, size)
		if err != nil {
			return err
		}
		return m.store(dest, b)

	case dif.SubrAlloca, dif.SubrCopyin:
		size := arg(0)
		if subr == dif.SubrCopyin {
			size = arg(1)
		}
		pad := (m.scratchPtr+7)&^7 - m.scratchPtr
		total := pad + size
		if total < size || !m.inScratch(total) {
			return fault(FaultNoScratch, 0)
		}
		addr, buf := m.scratchNext()
		addr += pad
		// The kernel leaves alloca()'s memory as it finds it; here it
		// is zeroed, so that runs are reproducible.
		clear(buf[:total])
		if subr == dif.SubrCopyin {
			b, err := m.readUser(arg(0), size)
			if err != nil {
				return err
			}
			copy(buf[pad:], b)
		}
		m.scratchPtr += total
		*rd = addr

	case dif.SubrCopyinto:
		size, dest := arg(1), arg(2)
		if !m.inScratchRange(dest, size) {
			return fault(FaultBadAddr, dest)
		}
		b, err := m.readUser(arg(0), size)
		if err != nil {
			return err
		}
		return m.store(dest, b)

	case dif.SubrCopyinstr:
		size := strsize
		if len(args) > 1 && arg(1) < size {
			size = arg(1) + 1
		}
		if !m.inScratch(size) {
			return fault(FaultNoScratch, 0)
		}
		addr, buf := m.scratchNext()
		src := arg(0)
		for i := uint64(0); i < size; i++ {
			b, err := m.readUser(src+i, 1)
			if err != nil {
				return err
			}
			buf[i] = b[0]
			if b[0] == 0 {
				break
			}
		}
		buf[size-1] = 0
		m.scratchPtr += size
		*rd = addr

	case dif.SubrProgenyof:
		// The machine knows a thread's process and its parent only.
		pid := int32(arg(0))
		*rd = 0
		if pid == int32(ctx.PID) || pid == int32(ctx.PPID) {
			*rd = 1
		}

	case dif.SubrSpeculation:
		*rd = m.speculation()

	case dif.SubrCopyout:
		kaddr, uaddr, size := arg(0), arg(1), arg(2)
		if err := m.canload(kaddr, size); err != nil {
			return err
		}
		b, err := m.read(kaddr, size)
		if err != nil {
			return err
		}
		return m.writeUser(uaddr, b)

	case dif.SubrCopyoutstr:
		kaddr, uaddr, size := arg(0), arg(1), arg(2)
		lim, err := m.strcanload(kaddr, size)
		if err != nil {
			return err
		}
		var b []byte
		for i := uint64(0); i < lim; i++ {
			c, err := m.load8(kaddr + i)
			if err != nil {
				return err
			}
			b = append(b, c)
			if c == 0 {
				break
			}
		}
		return m.writeUser(uaddr, b)

	case dif.SubrStrlen:
		addr := arg(0)
		lim, err := m.strcanload(addr, strsize)
		if err != nil {
			return err
		}
		*rd, err = m.strlen(addr, lim)
		return err

	case dif.SubrStrchr, dif.SubrStrrchr:
		addr, target := arg(0), byte(arg(1))
		lim, err := m.strcanload(addr, strsize)
		if err != nil {
			return err
		}
		*rd = 0
		for end := addr + lim; addr < end; addr++ {
			c, err := m.load8(addr)
			if err != nil {
				return err
			}
			if c == target {
				*rd = addr
				if subr == dif.SubrStrchr {
					break
				}
			}
			if c == 0 {
				break
			}
		}

	case dif.SubrStrstr, dif.SubrIndex, dif.SubrRindex:
		return m.strstr(subr, rd, args)

	case dif.SubrStrtok:
		return m.strtokSubr(rd, arg(0), arg(1))

	case dif.SubrSubstr:
		return m.substr(rd, args)

	case dif.SubrJSON:
		return m.jsonSubr(rd, arg(0), arg(1))

	case dif.SubrToupper, dif.SubrTolower:
		s := arg(0)
		lower, upper, convert := byte('a'), byte('z'), byte('A')
		if subr == dif.SubrTolower {
			lower, upper, convert = 'A', 'Z', 'a'
		}
		n, err := m.strlen(s, strsize)
		if err != nil {
			return err
		}
		if err := m.canload(s, n+1); err != nil {
			return err
		}
		if !m.inScratch(strsize) {
			return fault(FaultNoScratch, 0)
		}
		addr, dest := m.scratchNext()
		i := uint64(0)
		for ; i < strsize-1; i++ {
			c, err := m.load8(s + i)
			if err != nil {
				return err
			}
			if c == 0 {
				break
			}
			if c >= lower && c <= upper {
				c = convert + (c - lower)
			}
			dest[i] = c
		}
		dest[i] = 0
		m.scratchPtr += strsize
		*rd = addr

	case dif.SubrStrjoin:
		return m.strjoin(rd, arg(0), arg(1))

	case dif.SubrStrtoll:
		s, base := arg(0), uint64(10)
		if len(args) > 1 {
			if base = arg(1); int64(base) <= 1 || base > 36 {
				return fault(FaultIllOp, 0)
			}
		}
		lim, err := m.strcanload(s, strsize)
		if err != nil {
			*rd = 1 << 63 // INT64_MIN, what the kernel leaves in rd
			return err
		}
		v, err := strtoll(func(i uint64) (byte, error) { return m.load8(s + i) }, base, lim)
		*rd = uint64(v)
		return err

	case dif.SubrLltostr:
		return m.lltostr(rd, args)

	case dif.SubrHtons, dif.SubrNtohs:
		v := uint16(arg(0))
		*rd = uint64(v>>8 | v<<8)
	case dif.SubrHtonl, dif.SubrNtohl:
		v := uint32(arg(0))
		*rd = uint64(v>>24 | v>>8&0xff00 | v<<8&0xff0000 | v<<24)
	case dif.SubrHtonll, dif.SubrNtohll:
		v := arg(0)
		var r uint64
		for range 8 {
			r = r<<8 | v&0xff
			v >>= 8
		}
		*rd = r

	case dif.SubrBasename, dif.SubrDirname:
		return m.basename(subr, rd, arg(0))

	case dif.SubrCleanpath:
		return m.cleanpath(rd, arg(0))

	case dif.SubrInetNtoa, dif.SubrInetNtoa6, dif.SubrInetNtop:
		return m.inetNtop(subr, rd, args)

	case dif.SubrMemref:
		pad := (m.scratchPtr+7)&^7 - m.scratchPtr
		if !m.inScratch(pad + 16) {
			return fault(FaultNoScratch, 0)
		}
		addr, buf := m.scratchNext()
		putLE(buf[pad:pad+8], arg(0))
		putLE(buf[pad+8:pad+16], arg(1))
		m.scratchPtr += pad + 16
		*rd = addr + pad

	case dif.SubrMemstr:
		mem, c, size := arg(0), byte(arg(1)), arg(2)
		*rd = 0
		if size == 0 {
			return nil
		}
		if err := m.canload(mem, size-1); err != nil {
			return err
		}
		if !m.inScratch(size) {
			return fault(FaultNoScratch, 0)
		}
		if size > memstrMax {
			return fault(FaultIllOp, 0)
		}
		addr, str := m.scratchNext()
		for i := uint64(0); i < size-1; i++ {
			n, err := m.load8(mem + i)
			if err != nil {
				return err
			}
			if n == 0 {
				n = c
			}
			str[i] = n
		}
		str[size-1] = 0
		m.scratchPtr += size
		*rd = addr

	default:
		// mutex_*, rw_*, sx_*, msgsize, msgdsize, getmajor, getminor,
		// ddi_pathname, typeref, getf, d_path, d_path_dentry: they read
		// kernel structures.
		return unsupported("subroutine " + dif.SubrName(subr))
	}
	return nil
}

func (m *Machine) writeUser(addr uint64, b []byte) error {
	if m.cfg.User == nil || m.cfg.User.Write(addr, b) != nil {
		return fault(FaultBadAddr, addr)
	}
	return nil
}

// strstr runs strstr(), index() and rindex().
func (m *Machine) strstr(subr uint16, rd *uint64, args []tuple) error {
	strsize := uint64(m.cfg.StrSize)
	orig, sub := args0(args, 0), args0(args, 1)
	n, err := m.strlen(orig, strsize)
	if err != nil {
		return err
	}
	subn, err := m.strlen(sub, strsize)
	if err != nil {
		return err
	}
	notfound := uint64(0)
	if subr != dif.SubrStrstr {
		notfound = math.MaxUint64 // -1
	}
	*rd = notfound
	if err := m.canload(orig, n+1); err != nil {
		return err
	}
	if err := m.canload(sub, subn+1); err != nil {
		return err
	}
	if subn == 0 && n == 0 {
		*rd = 0
		if subr == dif.SubrStrstr {
			*rd = orig
		}
		return nil
	}
	// Positions are offsets from orig; the search runs from pos to
	// limit by inc.
	pos, limit, inc := int64(0), int64(n), int64(1)
	if subr != dif.SubrStrstr {
		if subr == dif.SubrRindex {
			pos, limit, inc = int64(n), -1, -1
		}
		if len(args) == 3 {
			p := int64(args[2].value)
			if subr == dif.SubrRindex {
				if p < 0 {
					if subn == 0 {
						*rd = 0
					}
					return nil
				}
				p = min(p, int64(n))
			} else {
				p = max(p, 0)
				if p >= int64(n) {
					if subn == 0 {
						*rd = n
					}
					return nil
				}
			}
			pos = p
		}
	}
	for ; pos != limit; pos += inc {
		r, err := m.strncmp(orig+uint64(pos), sub, subn)
		if err != nil {
			return err
		}
		if r == 0 {
			if subr == dif.SubrStrstr {
				*rd = orig + uint64(pos)
			} else {
				*rd = uint64(pos)
			}
			return nil
		}
	}
	return nil
}

func args0(args []tuple, i int) uint64 {
	if i < len(args) {
		return args[i].value
	}
	return 0
}

// strtokSubr runs strtok(): with a zero address it goes on in the
// string of the last call of the firing.
func (m *Machine) strtokSubr(rd *uint64, addr, tokaddr uint64) error {
	size := uint64(m.cfg.StrSize)
	clim, err := m.strcanload(tokaddr, size)
	if err != nil {
		return err
	}
	toklimit := tokaddr + clim
	if !m.inScratch(size) {
		return fault(FaultNoScratch, 0)
	}
	var limit uint64
	if addr == 0 {
		addr, limit = m.strtok, m.strtokLimit
	} else {
		if clim, err = m.strcanload(addr, size); err != nil {
			return err
		}
		limit = addr + clim
	}
	var tokmap [256]bool
	var c byte
	for ; tokaddr < toklimit; tokaddr++ {
		if c, err = m.load8(tokaddr); err != nil {
			return err
		}
		if c == 0 {
			break
		}
		tokmap[c] = true
	}
	// Skip the delimiters before the token.
	for ; addr < limit; addr++ {
		if c, err = m.load8(addr); err != nil {
			return err
		}
		if c == 0 || !tokmap[c] {
			break
		}
	}
	if c == 0 {
		*rd = 0
		m.strtok, m.strtokLimit = 0, 0
		return nil
	}
	dest, buf := m.scratchNext()
	i := uint64(0)
	for ; addr < limit && i < size-1; addr++ {
		if c, err = m.load8(addr); err != nil {
			return err
		}
		if c == 0 || tokmap[c] {
			break
		}
		buf[i] = c
		i++
	}
	buf[i] = 0
	*rd = dest
	m.scratchPtr += size
	m.strtok, m.strtokLimit = addr, limit
	return nil
}

// substr runs substr(s, index[, length]), with Perl's rules for
// negative positions.
func (m *Machine) substr(rd *uint64, args []tuple) error {
	size := uint64(m.cfg.StrSize)
	s := args0(args, 0)
	index, remaining := int64(args0(args, 1)), int64(args0(args, 2))
	n, err := m.strlen(s, size)
	if err != nil {
		return err
	}
	length := int64(n)
	if err := m.canload(s, n+1); err != nil {
		return err
	}
	if !m.inScratch(size) {
		return fault(FaultNoScratch, 0)
	}
	if len(args) <= 2 {
		remaining = int64(size)
	}
	if index < 0 {
		index += length
		if index < 0 && index+remaining > 0 {
			remaining += index
			index = 0
		}
	}
	switch {
	case index >= length || index < 0:
		remaining = 0
	case remaining < 0:
		remaining += length - index
	case index+remaining > int64(size):
		remaining = int64(size) - index
	}
	addr, d := m.scratchNext()
	i := int64(0)
	for ; i < remaining && i < int64(len(d))-1; i++ {
		c, err := m.load8(s + uint64(index+i))
		if err != nil {
			return err
		}
		if d[i] = c; c == 0 {
			break
		}
	}
	d[i] = 0
	m.scratchPtr += size
	*rd = addr
	return nil
}

// strjoin concatenates two strings in scratch, taking only as much
// scratch as the result needs.
func (m *Machine) strjoin(rd *uint64, s1, s2 uint64) error {
	size := uint64(m.cfg.StrSize)
	lim1, err := m.strcanload(s1, size)
	if err != nil {
		return err
	}
	lim2, err := m.strcanload(s2, size)
	if err != nil {
		return err
	}
	if !m.inScratch(size) {
		return fault(FaultNoScratch, 0)
	}
	addr, d := m.scratchNext()
	i := uint64(0)
	for {
		if i >= size {
			return fault(FaultNoScratch, 0)
		}
		var c byte
		if i < lim1 {
			if c, err = m.load8(s1 + i); err != nil {
				return err
			}
		}
		if d[i] = c; c == 0 {
			break
		}
		i++
	}
	for j := uint64(0); ; j++ {
		if i >= size {
			return fault(FaultNoScratch, 0)
		}
		var c byte
		if j < lim2 {
			if c, err = m.load8(s2 + j); err != nil {
				return err
			}
		}
		d[i] = c
		i++
		if c == 0 {
			break
		}
	}
	m.scratchPtr += i
	*rd = addr
	return nil
}

// strtoll converts a string of at most limit bytes, read by get, as
// dtrace_strtoll does: blanks, a sign, 0x for base 16, digits.
func strtoll(get func(uint64) (byte, error), base uint64, limit uint64) (int64, error) {
	var pos uint64
	c, err := get(pos)
	for err == nil && (c == ' ' || c == '\t') {
		pos++
		c, err = get(pos)
	}
	if err != nil {
		return 0, err
	}
	neg := false
	if c == '-' || c == '+' {
		neg = c == '-'
		pos++
		if c, err = get(pos); err != nil {
			return 0, err
		}
	}
	if base == 16 && c == '0' {
		cc, err := get(pos + 1)
		if err != nil {
			return 0, err
		}
		if cc == 'x' || cc == 'X' {
			ccc, err := get(pos + 2)
			if err != nil {
				return 0, err
			}
			if isxdigit(ccc) {
				pos += 2
				c = ccc
			}
		}
	}
	var val int64
	for pos < limit && c != 0 && isalnum(c) {
		x := digit(c)
		if x >= base {
			break
		}
		val = val*int64(base) + int64(x)
		pos++
		if c, err = get(pos); err != nil {
			return 0, err
		}
	}
	if neg {
		return -val, nil
	}
	return val, nil
}

func isdigit(c byte) bool  { return c >= '0' && c <= '9' }
func islower(c byte) bool  { return c >= 'a' && c <= 'z' }
func isupper(c byte) bool  { return c >= 'A' && c <= 'Z' }
func isalnum(c byte) bool  { return isdigit(c) || islower(c) || isupper(c) }
func isxdigit(c byte) bool { return isdigit(c) || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F' }
func isspace(c byte) bool  { return c == ' ' || c >= '\t' && c <= '\r' }

func digit(c byte) uint64 {
	switch {
	case isdigit(c):
		return uint64(c - '0')
	case islower(c):
		return uint64(c-'a') + 10
	}
	return uint64(c-'A') + 10
}

// lltostr formats an integer in a base from 2 to 36, with 0 before an
// octal number and 0x before a hexadecimal one.
func (m *Machine) lltostr(rd *uint64, args []tuple) error {
	i := int64(args0(args, 0))
	base := uint64(10)
	if len(args) > 1 {
		if base = args[1].value; int64(base) <= 1 || base > 36 {
			return fault(FaultIllOp, 0)
		}
	}
	val := uint64(i)
	if base == 10 && i < 0 {
		val = uint64(-i)
	}
	const size = 65 // room for 2^64 in binary
	if !m.inScratch(size) {
		return fault(FaultNoScratch, 0)
	}
	addr, buf := m.scratchNext()
	end := size - 1
	put := func(c byte) {
		buf[end] = c
		end--
	}
	for put(0); val != 0; val /= base {
		if d := val % base; d <= 9 {
			put('0' + byte(d))
		} else {
			put('a' + byte(d-10))
		}
	}
	if i == 0 && base == 16 {
		put('0')
	}
	if base == 16 {
		put('x')
	}
	if i == 0 || base == 8 || base == 16 {
		put('0')
	}
	if i < 0 && base == 10 {
		put('-')
	}
	*rd = addr + uint64(end) + 1
	m.scratchPtr += size
	return nil
}

// basename runs basename() and dirname().
func (m *Machine) basename(subr uint16, rd *uint64, src uint64) error {
	size := uint64(m.cfg.StrSize)
	n, err := m.strlen(src, size)
	if err != nil {
		return err
	}
	if err := m.canload(src, n+1); err != nil {
		return err
	}
	if !m.inScratch(size) {
		return fault(FaultNoScratch, 0)
	}
	dot := false // src is "."
	get := func(i int) (byte, error) {
		if dot {
			return '.', nil
		}
		return m.load8(src + uint64(i))
	}
	length := int(n)
	if length == 0 {
		length, dot = 1, true
	}
	lastbase, firstbase, lastdir := -1, -1, -1
	i := length - 1
	// From the back: the last character that is not a slash ends the
	// base name, the slash before it starts it, and the last
	// non-slash before that ends the directory.
	for ; i >= 0; i-- {
		c, err := get(i)
		if err != nil {
			return err
		}
		if c != '/' {
			break
		}
	}
	if i >= 0 {
		lastbase = i
	}
	for ; i >= 0; i-- {
		c, err := get(i)
		if err != nil {
			return err
		}
		if c == '/' {
			break
		}
	}
	if i >= 0 {
		firstbase = i + 1
	}
	for ; i >= 0; i-- {
		c, err := get(i)
		if err != nil {
			return err
		}
		if c != '/' {
			break
		}
	}
	if i >= 0 {
		lastdir = i
	}
	if lastbase == -1 {
		// Only slashes: either name is "/".
		firstbase, lastbase, lastdir = 0, 0, 0
	}
	if firstbase == -1 {
		// Only a base name: its directory is ".".
		if subr == dif.SubrDirname {
			dot, lastdir = true, 0
		} else {
			firstbase = 0
		}
	}
	var start, end int
	if subr == dif.SubrDirname {
		if lastdir == -1 {
			// "/name": the directory is the leading slash.
			lastdir = 0
		}
		start, end = 0, lastdir
	} else {
		start, end = firstbase, lastbase
	}
	addr, dest := m.scratchNext()
	j := 0
	for i := start; i <= end && uint64(j) < size-1; i, j = i+1, j+1 {
		if dest[j], err = get(i); err != nil {
			return err
		}
	}
	dest[j] = 0
	*rd = addr
	m.scratchPtr += size
	return nil
}

// cleanpath removes "//", "/./" and "dir/../" from a path.
func (m *Machine) cleanpath(rd *uint64, src uint64) error {
	size := uint64(m.cfg.StrSize)
	lim, err := m.strcanload(src, size)
	if err != nil {
		return err
	}
	if !m.inScratch(size) {
		return fault(FaultNoScratch, 0)
	}
	addr, dest := m.scratchNext()
	var i, j uint64
	get := func() (byte, error) {
		if i >= lim {
			return 0, nil
		}
		c, err := m.load8(src + i)
		i++
		return c, err
	}
	put := func(cs ...byte) {
		for _, c := range cs {
			dest[j] = c
			j++
		}
	}
	c, err := get()
	if err != nil {
		return err
	}
	for {
		// next: c is the character to look at.
		if j+5 >= size { // 5 = strlen("/..c\0")
			break
		}
		if c != '/' {
			put(c)
		} else if c, err = get(); err != nil {
			return err
		} else if c == '/' {
			continue // "//": look at the second slash again
		} else if c != '.' {
			put('/', c)
		} else if c, err = get(); err != nil {
			return err
		} else if c == '/' {
			continue // "/./"
		} else if c != '.' {
			put('/', '.', c)
		} else if c, err = get(); err != nil {
			return err
		} else if c != '/' && c != 0 {
			put('/', '.', '.', c)
		} else {
			// "/../" or "/..": back up to the previous slash.
			i--
			for j != 0 {
				j--
				if dest[j] == '/' {
					break
				}
			}
			if c == 0 {
				j++
				dest[j] = '/'
			}
		}
		if c == 0 {
			break
		}
		if c, err = get(); err != nil {
			return err
		}
	}
	dest[j] = 0
	*rd = addr
	m.scratchPtr += size
	return nil
}

// inetNtop runs inet_ntop(), inet_ntoa() and inet_ntoa6().
func (m *Machine) inetNtop(subr uint16, rd *uint64, args []tuple) error {
	af, argi := int32(afInet), 0
	switch subr {
	case dif.SubrInetNtop:
		af, argi = int32(args0(args, 0)), 1
	case dif.SubrInetNtoa6:
		af = afInet6
	}
	src := args0(args, argi)
	var s []byte
	var size uint64
	switch af {
	case afInet:
		if err := m.canload(src, 4); err != nil {
			return err
		}
		ip, err := m.read(src, 4)
		if err != nil {
			return err
		}
		size = inetAddrStrLen
		s = appendDotted(nil, ip)
	case afInet6, afInet6Linux:
		if err := m.canload(src, 16); err != nil {
			return err
		}
		ip, err := m.read(src, 16)
		if err != nil {
			return err
		}
		size = inet6AddrStrLen
		s = formatIPv6(ip, subr == dif.SubrInetNtoa6)
	default:
		return fault(FaultIllOp, 0)
	}
	if !m.inScratch(size) {
		return fault(FaultNoScratch, 0)
	}
	// The kernel writes the string backwards from the end of its
	// buffer; so does this, to return the same address.
	addr, buf := m.scratchNext()
	s = s[:min(uint64(len(s)), size-1)]
	off := size - 1 - uint64(len(s))
	copy(buf[off:], s)
	buf[size-1] = 0
	*rd = addr + off
	m.scratchPtr += size
	return nil
}

func appendDotted(b, ip []byte) []byte {
	for i, v := range ip {
		if i > 0 {
			b = append(b, '.')
		}
		b = appendUint(b, uint64(v), 10)
	}
	return b
}

func appendUint(b []byte, v, base uint64) []byte {
	const digits = "0123456789abcdef"
	var tmp [20]byte
	n := len(tmp)
	for {
		n--
		tmp[n] = digits[v%base]
		if v /= base; v == 0 {
			break
		}
	}
	return append(b, tmp[n:]...)
}

// formatIPv6 writes an IPv6 address as the kernel does (RFC 1884, one
// run of zeroes compressed, an embedded IPv4 address in dotted form);
// v4only gives only the IPv4 part of a mapped or compatible address, as
// inet_ntoa6 does.
func formatIPv6(ip []byte, v4only bool) []byte {
	// Find the longest run of zero 16-bit groups (the kernel's scan,
	// quirks and all).
	firstzero, tryzero, numzero := -1, -1, 1
	for i := 0; i < 16; i++ {
		if ip[i] == 0 && tryzero == -1 && i%2 == 0 {
			tryzero = i
			continue
		}
		if tryzero != -1 && (ip[i] != 0 || i == 15) {
			if i-tryzero <= numzero {
				tryzero = -1
				continue
			}
			firstzero = tryzero
			numzero = i - i%2 - tryzero
			tryzero = -1
			if ip[i] == 0 && i == 15 {
				numzero += 2
			}
		}
	}

	// Build the string backwards, as the kernel does.
	var buf [64]byte
	end := len(buf) - 1
	put := func(c byte) {
		if end >= 0 {
			buf[end] = c
			end--
		}
	}
	v6end := 14
	zero12 := true
	for _, b := range ip[:10] {
		zero12 = zero12 && b == 0
	}
	mapped := zero12 && ip[10] == 0xff && ip[11] == 0xff
	w3 := uint32(ip[12])<<24 | uint32(ip[13])<<16 | uint32(ip[14])<<8 | uint32(ip[15])
	compat := zero12 && ip[10] == 0 && ip[11] == 0 && w3 != 0 && w3 != 1
	if mapped || compat {
		for i := 15; i >= 12; i-- {
			v := ip[i]
			if v == 0 {
				put('0')
			}
			for ; v != 0; v /= 10 {
				put('0' + v%10)
			}
			if i > 12 {
				put('.')
			}
		}
		if v4only {
			return append([]byte(nil), buf[end+1:]...)
		}
		v6end = 10
	}
	const digits = "0123456789abcdef"
	for i := v6end; i >= 0; i -= 2 {
		if i == firstzero+numzero-2 {
			put(':')
			put(':')
			i -= numzero - 2
			continue
		}
		if i < 14 && i != firstzero-2 {
			put(':')
		}
		v := uint16(ip[i])<<8 | uint16(ip[i+1])
		if v == 0 {
			put('0')
		}
		for ; v != 0; v /= 16 {
			put(digits[v%16])
		}
	}
	return append([]byte(nil), buf[end+1:]...)
}
