// Package buildid reads GNU build-ids, which name an ELF image's
// contents: the NT_GNU_BUILD_ID note of owner "GNU" that the linker
// writes into an image and its separate debug file, and that the
// kernel shows for itself and its modules in /sys. Debug files are
// found, fetched (debuginfod) and checked by them, and a saved program
// records them.
package buildid

import (
	"debug/elf"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
)

// ntGNUBuildID is NT_GNU_BUILD_ID, the note's type.
const ntGNUBuildID = 3

// ErrNone is the error of an image without a build-id note.
var ErrNone = errors.New("no GNU build-id note")

// Note returns the build-id in the sequence of ELF notes b, of byte
// order bo, or nil when there is none.
func Note(b []byte, bo binary.ByteOrder) []byte {
	align := func(n uint32) uint64 { return (uint64(n) + 3) &^ 3 }
	for len(b) >= 12 {
		namesz, descsz, typ := bo.Uint32(b), bo.Uint32(b[4:]), bo.Uint32(b[8:])
		b = b[12:]
		if align(namesz) > uint64(len(b)) {
			return nil
		}
		name := b[:namesz]
		b = b[align(namesz):]
		if uint64(descsz) > uint64(len(b)) {
			return nil
		}
		desc := b[:descsz]
		if typ == ntGNUBuildID && string(name) == "GNU\x00" && descsz > 0 {
			return desc
		}
		if align(descsz) > uint64(len(b)) {
			return nil
		}
		b = b[align(descsz):]
	}
	return nil
}

// NoteHex is Note in the host's byte order, hex: as the kernel's /sys
// files hold the notes of the kernel running.
func NoteHex(b []byte) string {
	return hex.EncodeToString(Note(b, binary.NativeEndian))
}

// File returns the build-id of the ELF file r, from its note sections,
// or its note segments when it has no section headers.
func File(r io.ReaderAt) ([]byte, error) {
	f, err := elf.NewFile(r)
	if err != nil {
		return nil, err
	}
	var notes []io.ReaderAt
	for _, s := range f.Sections {
		if s.Type == elf.SHT_NOTE && s.Flags&elf.SHF_COMPRESSED == 0 {
			notes = append(notes, s)
		}
	}
	if len(f.Sections) == 0 {
		for _, p := range f.Progs {
			if p.Type == elf.PT_NOTE {
				notes = append(notes, p)
			}
		}
	}
	for _, n := range notes {
		b, err := io.ReadAll(io.NewSectionReader(n, 0, 1<<20))
		if err != nil {
			continue
		}
		if id := Note(b, f.ByteOrder); id != nil {
			return id, nil
		}
	}
	return nil, ErrNone
}

// Path returns the build-id of the ELF file at path, hex.
func Path(path string) (string, error) {
	f, err := os.Open(path)
	if err != nil {
		return "", err
	}
	defer f.Close()
	id, err := File(f)
	if err != nil {
		return "", err
	}
	return hex.EncodeToString(id), nil
}

// Running returns the build-id of the running kernel (module
// "vmlinux") or of its loaded module, hex, as /sys shows them under
// sysroot ("/" but in tests).
func Running(sysroot, module string) (string, error) {
	path := filepath.Join(sysroot, "sys/kernel/notes")
	if module != "vmlinux" {
		path = filepath.Join(sysroot, "sys/module", module, "notes/.note.gnu.build-id")
	}
	b, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) && module != "vmlinux" {
		return "", fmt.Errorf("module %s is not loaded", module)
	}
	if err != nil {
		return "", fmt.Errorf("the running build-id cannot be read: %v", err)
	}
	id := NoteHex(b)
	if id == "" {
		return "", fmt.Errorf("%s holds no build-id", path)
	}
	return id, nil
}
