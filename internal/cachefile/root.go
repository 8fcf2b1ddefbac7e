package cachefile

import "strings"

// rootMark stands in a cache file's header for the process root an
// image was read through (/proc/PID/root), which differs from one run of
// kdtrace -c or -p to the next; it cannot start an absolute path.
const rootMark = "<root>"

// processRoot returns the /proc/PID/root directory path is read
// through, or "" for a path outside any.
func processRoot(path string) string {
	rest, ok := strings.CutPrefix(path, "/proc/")
	if !ok {
		return ""
	}
	pid, rest, ok := strings.Cut(rest, "/")
	if !ok || pid == "" || strings.Trim(pid, "0123456789") != "" || !strings.HasPrefix(rest, "root/") {
		return ""
	}
	return "/proc/" + pid + "/root"
}

// FromRoot returns path as a cache file records it for image, both
// absolute: a path inside the process root image is read through starts
// with a mark in place of that root, so that the record holds for the
// same file in the next process.
func FromRoot(path, image string) string {
	if root := processRoot(image); root != "" {
		if rest, ok := strings.CutPrefix(path, root+"/"); ok {
			return rootMark + "/" + rest
		}
	}
	return path
}

// InRoot undoes FromRoot for image.
func InRoot(path, image string) string {
	if rest, ok := strings.CutPrefix(path, rootMark+"/"); ok {
		return processRoot(image) + "/" + rest
	}
	return path
}
