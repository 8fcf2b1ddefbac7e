package debuginfo

import "github.com/kdtrace/kdtrace/internal/debuginfo/internal/elffile"

// DebugFile returns the file that holds the DWARF of the ELF image at
// path, found as OpenImage finds it: the image itself, or a separate
// debug file by build-id, .gnu_debuglink or path under the debug root.
// A stripped image's symbol table is there too. The error is a
// *NotFoundError when there is none, a *MismatchError when the file
// found does not belong to the image.
func DebugFile(path string, opts Options) (string, error) {
	ef, err := elffile.Open(path)
	if err != nil {
		return "", err
	}
	defer ef.Close()
	img := &Image{Module: moduleName(path), Path: path, BuildID: ef.BuildID()}
	dbg, err := locate(img, ef, nil, &opts)
	if err != nil {
		return "", err
	}
	if dbg != ef {
		dbg.Close()
	}
	return img.DebugPath, nil
}
