//go:build unix

package cachedir

import (
	"fmt"
	"io/fs"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"time"

	"golang.org/x/sys/unix"
)

// maxLinks bounds the symbolic links followed on the way, as the
// kernel's own limit does.
const maxLinks = 40

// Open opens the cache directory at path, creating what is missing of
// it, after checking every directory from / down (see the package
// comment). An error says which directory was refused and why.
func Open(path string) (*Dir, error) {
	abs, err := filepath.Abs(path)
	if err != nil {
		return nil, err
	}
	uid := os.Geteuid()
	walked := abs
	for links := 0; ; links++ {
		if links > maxLinks {
			return nil, &fs.PathError{Op: "open", Path: abs, Err: unix.ELOOP}
		}
		fd, next, err := walk(walked, uid)
		if err != nil {
			return nil, err
		}
		if next == "" {
			return &Dir{fd: fd, Path: abs}, nil
		}
		walked = next
	}
}

// walk opens each directory of the absolute, clean path in turn from /,
// checking it. At a trusted symbolic link it stops and returns the path
// with the link replaced by its target, to be walked anew; else it
// returns the last directory's descriptor.
func walk(path string, uid int) (fd int, next string, err error) {
	fd, err = openat(unix.AT_FDCWD, "/", unix.O_RDONLY|unix.O_DIRECTORY, 0)
	if err != nil {
		return -1, "", &fs.PathError{Op: "open", Path: "/", Err: err}
	}
	if err := check(fd, "/", uid, path == "/"); err != nil {
		unix.Close(fd)
		return -1, "", err
	}
	names := strings.Split(path, "/")[1:]
	if path == "/" {
		names = nil
	}
	done := "/"
	for i, name := range names {
		p := filepath.Join(done, name)
		dfd, err := openat(fd, name, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_NOFOLLOW, 0)
		if err == unix.ENOENT {
			if err = unix.Mkdirat(fd, name, 0o700); err == nil || err == unix.EEXIST {
				dfd, err = openat(fd, name, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_NOFOLLOW, 0)
			}
		}
		if err != nil {
			target, lerr := trustedLink(fd, name, p, uid)
			unix.Close(fd)
			if lerr != nil {
				return -1, "", lerr
			}
			if target == "" {
				return -1, "", &fs.PathError{Op: "open", Path: p, Err: err}
			}
			if !filepath.IsAbs(target) {
				target = filepath.Join(done, target)
			}
			return -1, filepath.Join(append([]string{target}, names[i+1:]...)...), nil
		}
		unix.Close(fd)
		fd = dfd
		if err := check(fd, p, uid, i == len(names)-1); err != nil {
			unix.Close(fd)
			return -1, "", err
		}
		done = p
	}
	return fd, "", nil
}

// openat is openat(2) with O_CLOEXEC, retried when a signal interrupts
// it (as it may on a network file system).
func openat(dirfd int, name string, flags int, perm uint32) (int, error) {
	for {
		fd, err := unix.Openat(dirfd, name, flags|unix.O_CLOEXEC, perm)
		if err != unix.EINTR {
			return fd, err
		}
	}
}

// check tells whether the directory open at fd may be trusted: see the
// package comment. last is whether it is the cache directory itself.
func check(fd int, path string, uid int, last bool) error {
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil {
		return &fs.PathError{Op: "fstat", Path: path, Err: err}
	}
	mode := uint32(st.Mode)
	switch {
	case st.Uid != uint32(uid) && (last || st.Uid != 0):
		return &UnsafeError{path, fmt.Sprintf("owned by another user (uid %d)", st.Uid)}
	case mode&0o022 != 0 && (last || mode&unix.S_ISVTX == 0):
		return &UnsafeError{path, fmt.Sprintf("writable by other users (mode %#o)", mode&0o7777)}
	}
	return nil
}

// trustedLink returns the target of the symbolic link name in the
// directory open at dirfd, if it is one and its owner is uid or root;
// "" if name is no link.
func trustedLink(dirfd int, name, path string, uid int) (string, error) {
	var st unix.Stat_t
	if err := unix.Fstatat(dirfd, name, &st, unix.AT_SYMLINK_NOFOLLOW); err != nil || uint32(st.Mode)&unix.S_IFMT != unix.S_IFLNK {
		return "", nil
	}
	if st.Uid != uint32(uid) && st.Uid != 0 {
		return "", &UnsafeError{path, fmt.Sprintf("a symbolic link owned by another user (uid %d)", st.Uid)}
	}
	buf := make([]byte, unix.PathMax)
	n, err := unix.Readlinkat(dirfd, name, buf)
	if err != nil {
		return "", &fs.PathError{Op: "readlink", Path: path, Err: err}
	}
	if n == len(buf) {
		return "", &fs.PathError{Op: "readlink", Path: path, Err: unix.ENAMETOOLONG}
	}
	return string(buf[:n]), nil
}

// Close closes the directory.
func (d *Dir) Close() error { return unix.Close(d.fd) }

// Open opens the file name of the directory for reading, if it is a
// regular file of the running user's, not a link.
func (d *Dir) Open(name string) (*os.File, error) {
	p := filepath.Join(d.Path, name)
	// O_NONBLOCK, so that a FIFO cannot hold the open.
	fd, err := openat(d.fd, name, unix.O_RDONLY|unix.O_NOFOLLOW|unix.O_NONBLOCK, 0)
	if err != nil {
		return nil, &fs.PathError{Op: "open", Path: p, Err: err}
	}
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil {
		unix.Close(fd)
		return nil, &fs.PathError{Op: "fstat", Path: p, Err: err}
	}
	switch {
	case uint32(st.Mode)&unix.S_IFMT != unix.S_IFREG:
		unix.Close(fd)
		return nil, &UnsafeError{p, "not a regular file"}
	case st.Uid != uint32(os.Geteuid()):
		unix.Close(fd)
		return nil, &UnsafeError{p, fmt.Sprintf("owned by another user (uid %d)", st.Uid)}
	}
	if err := unix.SetNonblock(fd, false); err != nil {
		unix.Close(fd)
		return nil, &fs.PathError{Op: "fcntl", Path: p, Err: err}
	}
	return os.NewFile(uintptr(fd), p), nil
}

// Sub opens the subdirectory name of the directory, creating it mode
// 0700 if missing, not following a link, and checks it as Open checks
// the cache directory itself.
func (d *Dir) Sub(name string) (*Dir, error) {
	p := filepath.Join(d.Path, name)
	if name == "" || name == "." || name == ".." || strings.Contains(name, "/") {
		return nil, &UnsafeError{p, "not a name in the directory"}
	}
	fd, err := openat(d.fd, name, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_NOFOLLOW, 0)
	if err == unix.ENOENT {
		if err = unix.Mkdirat(d.fd, name, 0o700); err == nil || err == unix.EEXIST {
			fd, err = openat(d.fd, name, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_NOFOLLOW, 0)
		}
	}
	if err != nil {
		return nil, &fs.PathError{Op: "open", Path: p, Err: err}
	}
	if err := check(fd, p, os.Geteuid(), true); err != nil {
		unix.Close(fd)
		return nil, err
	}
	return &Dir{fd: fd, Path: p}, nil
}

// CreateTemp creates a new file, mode 0600, named prefix and six random
// letters, for a file written in parts then renamed into place. The
// caller removes it if it is not renamed.
func (d *Dir) CreateTemp(prefix string) (*os.File, error) {
	const letters = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"
	var err error
	for range 100 {
		b := []byte(prefix)
		for range 6 {
			b = append(b, letters[rand.IntN(len(letters))])
		}
		fd, oerr := openat(d.fd, string(b), unix.O_RDWR|unix.O_CREAT|unix.O_EXCL|unix.O_NOFOLLOW, 0o600)
		if oerr == nil {
			return os.NewFile(uintptr(fd), filepath.Join(d.Path, string(b))), nil
		}
		if err = oerr; oerr != unix.EEXIST {
			break
		}
	}
	return nil, &fs.PathError{Op: "create", Path: filepath.Join(d.Path, prefix+"XXXXXX"), Err: err}
}

// Rename renames the entry old of the directory to new, replacing
// whatever new was.
func (d *Dir) Rename(old, new string) error {
	if err := unix.Renameat(d.fd, old, d.fd, new); err != nil {
		return &os.LinkError{Op: "rename", Old: filepath.Join(d.Path, old), New: filepath.Join(d.Path, new), Err: err}
	}
	return nil
}

// RemoveDir removes the empty subdirectory name.
func (d *Dir) RemoveDir(name string) error {
	if err := unix.Unlinkat(d.fd, name, unix.AT_REMOVEDIR); err != nil {
		return &fs.PathError{Op: "rmdir", Path: filepath.Join(d.Path, name), Err: err}
	}
	return nil
}

// WriteFile replaces the file name of the directory with data, whole
// or not at all: data goes to a new temporary file, .tmp-<n><ext>, then
// renamed over name. Whatever name was, a link included, is replaced,
// not written through.
func (d *Dir) WriteFile(name string, data []byte) error {
	var tmp string
	var fd int
	var err error
	for range 100 {
		tmp = fmt.Sprintf(".tmp-%d%s", rand.Uint32(), filepath.Ext(name))
		fd, err = openat(d.fd, tmp, unix.O_WRONLY|unix.O_CREAT|unix.O_EXCL|unix.O_NOFOLLOW, 0o600)
		if err != unix.EEXIST {
			break
		}
	}
	if err != nil {
		return &fs.PathError{Op: "create", Path: filepath.Join(d.Path, tmp), Err: err}
	}
	f := os.NewFile(uintptr(fd), filepath.Join(d.Path, tmp))
	_, err = f.Write(data)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		if rerr := unix.Renameat(d.fd, tmp, d.fd, name); rerr != nil {
			err = &os.LinkError{Op: "rename", Old: f.Name(), New: filepath.Join(d.Path, name), Err: rerr}
		}
	}
	if err != nil {
		unix.Unlinkat(d.fd, tmp, 0)
	}
	return err
}

// Lstat describes the entry name of the directory, not following a
// link.
func (d *Dir) Lstat(name string) (Stat, error) {
	var st unix.Stat_t
	if err := unix.Fstatat(d.fd, name, &st, unix.AT_SYMLINK_NOFOLLOW); err != nil {
		return Stat{}, &fs.PathError{Op: "lstat", Path: filepath.Join(d.Path, name), Err: err}
	}
	sec, nsec := st.Mtim.Unix()
	asec, ansec := st.Atim.Unix()
	typ := uint32(st.Mode) & unix.S_IFMT
	return Stat{Regular: typ == unix.S_IFREG, Dir: typ == unix.S_IFDIR, Size: st.Size,
		ModTime: time.Unix(sec, nsec), AccessTime: time.Unix(asec, ansec)}, nil
}

// Touch sets the access and modification times of the entry name to t,
// not following a link.
func (d *Dir) Touch(name string, t time.Time) error { return d.SetTimes(name, t, t) }

// SetTimes sets the access and modification times of the entry name,
// not following a link.
func (d *Dir) SetTimes(name string, atime, mtime time.Time) error {
	ts := []unix.Timespec{unix.NsecToTimespec(atime.UnixNano()), unix.NsecToTimespec(mtime.UnixNano())}
	if err := unix.UtimesNanoAt(d.fd, name, ts, unix.AT_SYMLINK_NOFOLLOW); err != nil {
		return &fs.PathError{Op: "utimensat", Path: filepath.Join(d.Path, name), Err: err}
	}
	return nil
}

// Remove removes the entry name of the directory (a link, not what it
// points to).
func (d *Dir) Remove(name string) error {
	if err := unix.Unlinkat(d.fd, name, 0); err != nil {
		return &fs.PathError{Op: "unlink", Path: filepath.Join(d.Path, name), Err: err}
	}
	return nil
}

// Names returns the names of the directory's entries.
func (d *Dir) Names() ([]string, error) {
	fd, err := openat(d.fd, ".", unix.O_RDONLY|unix.O_DIRECTORY, 0)
	if err != nil {
		return nil, &fs.PathError{Op: "open", Path: d.Path, Err: err}
	}
	f := os.NewFile(uintptr(fd), d.Path)
	defer f.Close()
	return f.Readdirnames(-1)
}
