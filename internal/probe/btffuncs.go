package probe

import (
	"bytes"
	"debug/elf"
	"encoding/binary"
	"errors"
	"fmt"
	"strings"
	"unsafe"
)

// This file lists the functions of a BTF file by walking its FUNC
// records: package btf finds types by name but does not list them.

// BTF record kinds and the sizes of their trailers (linux/btf.h).
const (
	btfMagic      = 0xeb9f
	btfKindFunc   = 12
	btfNumKinds   = 20
	btfRecordSize = 12
)

// btfTrailerFixed and btfTrailerItem give a record's trailer size: a
// fixed part plus vlen items.
var (
	btfTrailerFixed = [btfNumKinds]uint32{1: 4, 3: 12, 14: 4, 17: 4}
	btfTrailerItem  = [btfNumKinds]uint32{4: 12, 5: 12, 6: 8, 13: 8, 15: 12, 19: 12}
)

// btfLinkage values of a FUNC record's vlen.
const btfExtern = 2

// btfSections returns the type and string sections of the BTF in data:
// raw BTF or an ELF file with a .BTF section.
func btfSections(data []byte) (typ, str []byte, err error) {
	if bytes.HasPrefix(data, []byte(elf.ELFMAG)) {
		f, err := elf.NewFile(bytes.NewReader(data))
		if err != nil {
			return nil, nil, err
		}
		s := f.Section(".BTF")
		if s == nil || s.Type == elf.SHT_NOBITS {
			return nil, nil, errNoBTF
		}
		if data, err = s.Data(); err != nil {
			return nil, nil, err
		}
	}
	if len(data) < 24 {
		return nil, nil, errors.New("BTF header truncated")
	}
	le := binary.LittleEndian
	if le.Uint16(data) != btfMagic {
		return nil, nil, fmt.Errorf("bad BTF magic %#04x (only little-endian BTF is listed)", le.Uint16(data))
	}
	hdrLen := uint64(le.Uint32(data[4:]))
	typeOff, typeLen := uint64(le.Uint32(data[8:])), uint64(le.Uint32(data[12:]))
	strOff, strLen := uint64(le.Uint32(data[16:])), uint64(le.Uint32(data[20:]))
	n := uint64(len(data))
	if hdrLen < 24 || hdrLen > n || typeOff+typeLen > n-hdrLen || strOff+strLen > n-hdrLen {
		return nil, nil, errors.New("BTF header describes sections past the end of the data")
	}
	body := data[hdrLen:]
	return body[typeOff : typeOff+typeLen], body[strOff : strOff+strLen], nil
}

var errNoBTF = errors.New("no .BTF section")

// btfFuncs lists the functions the BTF in data defines (FUNC records
// not marked extern), in ID order. baseStrs is the size of the base's
// string section for split BTF (a kernel module's), whose name offsets
// start after the base's; 0 otherwise. Functions named in the base's
// strings are skipped: a module's functions have names of its own. The
// list's names are the string section in data, which must outlive the
// list unchanged.
//
// It also returns the size of the string section.
func btfFuncs(data []byte, baseStrs uint32, module string) (*funcList, uint32, error) {
	typ, str, err := btfSections(data)
	if err != nil {
		return nil, 0, err
	}
	// The list's names are the section in place: the mapping is never
	// released (loadBTFFuncs).
	return sectionFuncs(typ, unsafe.String(unsafe.SliceData(str), len(str)), baseStrs, module)
}

// sectionFuncs is btfFuncs of BTF's type section, little-endian, and
// string section, which the list's names are substrings of.
func sectionFuncs(typ []byte, str string, baseStrs uint32, module string) (*funcList, uint32, error) {
	b := funcListBuilder{strs: str, spans: make([]span, 0, len(typ)/96)}
	le := binary.LittleEndian
	n := uint64(len(typ))
	off := uint64(0)
	for off+btfRecordSize <= n {
		nameOff := le.Uint32(typ[off:])
		info := le.Uint32(typ[off+4:])
		k := info >> 24 & 0x1f
		if k == 0 || k >= btfNumKinds {
			return nil, 0, fmt.Errorf("BTF record at %#x: unknown kind %d", off, k)
		}
		if k == btfKindFunc && info&0xffff != btfExtern && nameOff >= baseStrs {
			s := nameOff - baseStrs
			if uint64(s) >= uint64(len(str)) {
				return nil, 0, fmt.Errorf("BTF record at %#x: name offset %d outside the string section", off, nameOff)
			}
			end := strings.IndexByte(str[s:], 0)
			if end < 0 {
				end = len(str) - int(s)
			}
			if end > 0 {
				b.spans = append(b.spans, span{s, uint32(end)})
			}
		}
		off += btfRecordSize + uint64(btfTrailerFixed[k]) + uint64(btfTrailerItem[k])*uint64(info&0xffff)
	}
	if off != n {
		return nil, 0, errors.New("BTF record runs past the end of the type section")
	}
	return b.build(module), uint32(len(str)), nil
}
