package vm

import (
	"errors"
	"fmt"
)

// Memory is memory outside the machine: the kernel's, which ld*, rld*
// and the subroutines read, or a process's, which uld*, copyin and
// copyinstr read and copyout and copyoutstr write.
type Memory interface {
	// Read returns the n bytes at addr, or an error if any of them
	// cannot be read.
	Read(addr uint64, n int) ([]byte, error)
	// Write stores b at addr, or returns an error if any byte cannot be
	// written.
	Write(addr uint64, b []byte) error
}

// A Segment is a run of memory at a fixed address.
type Segment struct {
	Addr     uint64
	Data     []byte
	ReadOnly bool
}

// Segments is a Memory made of a few segments, for tests and for
// memory known in advance. An access must lie within one segment.
type Segments []Segment

var errNoMemory = errors.New("vm: no memory at address")

func (s Segments) find(addr uint64, n int) (*Segment, uint64, error) {
	for i := range s {
		g := &s[i]
		if addr >= g.Addr && addr-g.Addr <= uint64(len(g.Data)) && uint64(n) <= uint64(len(g.Data))-(addr-g.Addr) {
			return g, addr - g.Addr, nil
		}
	}
	return nil, 0, fmt.Errorf("%w 0x%x (%d bytes)", errNoMemory, addr, n)
}

// Read implements Memory.
func (s Segments) Read(addr uint64, n int) ([]byte, error) {
	g, off, err := s.find(addr, n)
	if err != nil {
		return nil, err
	}
	return append([]byte(nil), g.Data[off:off+uint64(n)]...), nil
}

// Write implements Memory.
func (s Segments) Write(addr uint64, b []byte) error {
	g, off, err := s.find(addr, len(b))
	if err != nil {
		return err
	}
	if g.ReadOnly {
		return fmt.Errorf("vm: memory at 0x%x is read-only", addr)
	}
	copy(g.Data[off:], b)
	return nil
}

// The machine's own memory — scratch, the string tables of the DIFOs it
// has run, by-reference variables and dynamic variables — lives in
// slots of 4 GiB from SpaceStart to SpaceEnd. The range is not
// canonical on amd64 or arm64, so no kernel or user pointer can fall in
// it; loads from it never reach a Memory.
const (
	SpaceStart uint64 = 0x5ee0_0000_0000_0000
	SpaceEnd   uint64 = SpaceStart + maxSlots<<slotShift

	slotShift = 32
	slotMask  = 1<<slotShift - 1
	maxSlots  = 1 << 20
)

// A region is one slot's memory.
type region struct {
	data     []byte
	writable bool
}

// space is the machine's address space: its regions by slot.
type space struct {
	regions map[uint32]*region
	free    []uint32
	next    uint32
}

// add maps data in a free slot and returns its address, or 0 when
// every slot is taken.
func (s *space) add(data []byte, writable bool) uint64 {
	if s.regions == nil {
		s.regions = make(map[uint32]*region)
		s.next = 1 // slot 0 stays unmapped
	}
	var slot uint32
	switch {
	case len(s.free) > 0:
		slot = s.free[len(s.free)-1]
		s.free = s.free[:len(s.free)-1]
	case s.next < maxSlots:
		slot = s.next
		s.next++
	default:
		return 0
	}
	s.regions[slot] = &region{data: data, writable: writable}
	return SpaceStart + uint64(slot)<<slotShift
}

// remove unmaps the region at addr.
func (s *space) remove(addr uint64) {
	slot := uint32((addr - SpaceStart) >> slotShift)
	if _, ok := s.regions[slot]; ok {
		delete(s.regions, slot)
		s.free = append(s.free, slot)
	}
}

// find returns the region holding addr and the offset of addr in it.
// inside reports whether addr is in the machine's range at all; r is
// nil for an address of the range that nothing is mapped at.
func (s *space) find(addr uint64) (r *region, off uint64, inside bool) {
	if addr < SpaceStart || addr >= SpaceEnd {
		return nil, 0, false
	}
	slot := uint32((addr - SpaceStart) >> slotShift)
	return s.regions[slot], addr & slotMask, true
}

// span returns the n bytes at addr when they lie in one region.
func (s *space) span(addr, n uint64) ([]byte, bool, bool) {
	r, off, inside := s.find(addr)
	if r == nil || n > uint64(len(r.data)) || off > uint64(len(r.data))-n {
		return nil, false, inside
	}
	return r.data[off : off+n : off+n], r.writable, true
}

// remain returns how many bytes of its region follow addr, and false if
// addr is not in a region.
func (s *space) remain(addr uint64) (uint64, bool) {
	r, off, _ := s.find(addr)
	if r == nil || off > uint64(len(r.data)) {
		return 0, false
	}
	return uint64(len(r.data)) - off, true
}

// read returns a copy of the n bytes at addr, from the machine's memory
// or the kernel's (dtrace_load*, dtrace_bcopy); a byte that cannot be
// read faults BADADDR.
func (m *Machine) read(addr, n uint64) ([]byte, error) {
	if b, _, inside := m.mem.span(addr, n); inside {
		if b == nil {
			return nil, fault(FaultBadAddr, addr)
		}
		return append([]byte(nil), b...), nil
	}
	return readFrom(m.cfg.Kernel, addr, n)
}

// readPast is read for a copy that may run past the end of one of the
// machine's regions: dt_cg_store copies a string by its type's size
// (copys), from a string table or a variable that holds fewer bytes.
// With kernel privilege the kernel copies whatever memory follows; the
// machine has none there, and gives zeroes for it. canload has already
// refused such a copy without kernel privilege.
func (m *Machine) readPast(addr, n uint64) ([]byte, error) {
	rem, ok := m.mem.remain(addr)
	if !ok || rem >= n {
		return m.read(addr, n)
	}
	b, err := m.read(addr, rem)
	if err != nil {
		return nil, err
	}
	return append(b, make([]byte, n-rem)...), nil
}

// readUser reads a process's memory (dtrace_fuword*, dtrace_copyin).
func (m *Machine) readUser(addr, n uint64) ([]byte, error) {
	return readFrom(m.cfg.User, addr, n)
}

func readFrom(mem Memory, addr, n uint64) ([]byte, error) {
	if mem == nil || n > 1<<31 {
		return nil, fault(FaultBadAddr, addr)
	}
	b, err := mem.Read(addr, int(n))
	if err != nil || uint64(len(b)) != n {
		return nil, fault(FaultBadAddr, addr)
	}
	return b, nil
}

// load8 reads one byte.
func (m *Machine) load8(addr uint64) (byte, error) {
	if b, _, inside := m.mem.span(addr, 1); inside {
		if b == nil {
			return 0, fault(FaultBadAddr, addr)
		}
		return b[0], nil
	}
	b, err := readFrom(m.cfg.Kernel, addr, 1)
	if err != nil {
		return 0, err
	}
	return b[0], nil
}

// le decodes a little-endian integer: DIF runs on the kernel's own byte
// order, little-endian on every platform kdtrace targets.
func le(b []byte) uint64 {
	var v uint64
	for i := len(b) - 1; i >= 0; i-- {
		v = v<<8 | uint64(b[i])
	}
	return v
}

func putLE(b []byte, v uint64) {
	for i := range b {
		b[i] = byte(v)
		v >>= 8
	}
}

// canstore reports whether the n bytes at addr are memory DIF may store
// to (dtrace_canstore): scratch and variables, never the kernel's.
func (m *Machine) canstore(addr, n uint64) bool {
	b, w, _ := m.mem.span(addr, n)
	return b != nil && w
}

// store writes b at addr, which canstore has approved.
func (m *Machine) store(addr uint64, b []byte) error {
	dst, w, _ := m.mem.span(addr, uint64(len(b)))
	if dst == nil || !w {
		return fault(FaultBadAddr, addr)
	}
	copy(dst, b)
	return nil
}

// canload checks that DIF may read the n bytes at addr
// (dtrace_canload): with kernel privilege anything may be read (the
// read itself may still fault); without it, only the machine's own
// memory.
func (m *Machine) canload(addr, n uint64) error {
	if !m.cfg.Restricted {
		return nil
	}
	if b, _, _ := m.mem.span(addr, n); b == nil {
		return fault(FaultKPriv, addr)
	}
	return nil
}

// strcanload checks that DIF may read a string of at most sz bytes at
// addr (dtrace_strcanload) and returns how many bytes it may scan: sz,
// or less where the string's region ends first. Without kernel
// privilege the string must end within its region.
func (m *Machine) strcanload(addr, sz uint64) (uint64, error) {
	rem, ok := m.mem.remain(addr)
	if !ok {
		if m.cfg.Restricted {
			return 0, fault(FaultKPriv, addr)
		}
		return sz, nil
	}
	lim := min(sz, rem)
	if m.cfg.Restricted {
		n, err := m.strlen(addr, lim)
		if err != nil {
			return 0, err
		}
		if n+1 > rem {
			return 0, fault(FaultKPriv, addr)
		}
	}
	return lim, nil
}

// strlen returns the length of the string at addr, at most lim
// (dtrace_strlen).
func (m *Machine) strlen(addr, lim uint64) (uint64, error) {
	var n uint64
	for ; n != lim; n++ {
		c, err := m.load8(addr + n)
		if err != nil {
			return 0, err
		}
		if c == 0 {
			break
		}
	}
	return n, nil
}

// strncmp compares two strings of at most limit bytes; a zero address is
// the empty string (dtrace_strncmp).
func (m *Machine) strncmp(s1, s2, limit uint64) (int, error) {
	if s1 == s2 || limit == 0 {
		return 0, nil
	}
	for {
		var c1, c2 byte
		var err error
		if s1 != 0 {
			if c1, err = m.load8(s1); err != nil {
				return 0, err
			}
			s1++
		}
		if s2 != 0 {
			if c2, err = m.load8(s2); err != nil {
				return 0, err
			}
			s2++
		}
		if c1 != c2 {
			return int(c1) - int(c2), nil
		}
		limit--
		if limit == 0 || c1 == 0 {
			return 0, nil
		}
	}
}

// ReadMemory returns the n bytes at addr as DIF would load them: from
// the machine's own memory (scratch, variables, string tables) or
// Config.Kernel. It is how a caller reads what a by-reference value
// refers to.
func (m *Machine) ReadMemory(addr uint64, n int) ([]byte, error) {
	if n < 0 {
		return nil, fmt.Errorf("vm: negative size %d", n)
	}
	return m.read(addr, uint64(n))
}

// ReadString returns the string at addr, up to its NUL or the string
// size, as the consumer records a string value.
func (m *Machine) ReadString(addr uint64) (string, error) {
	lim := uint64(m.cfg.StrSize)
	if rem, ok := m.mem.remain(addr); ok {
		lim = min(lim, rem)
	}
	var b []byte
	for i := uint64(0); i < lim; i++ {
		c, err := m.load8(addr + i)
		if err != nil {
			return "", err
		}
		if c == 0 {
			break
		}
		b = append(b, c)
	}
	return string(b), nil
}
