package guest

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
)

// Debian keeps a kernel's packages in the archive only until it moves
// on: the image, -dbg and headers packages, whose names carry the ABI
// number, go when a point release drops them, and linux-kbuild-<series>,
// whose name does not, is there at its newest version only. A test
// cannot pin one version for long, so it takes the newest kernel whose
// packages are all there, or all in its cache.

// Needs says which of a kernel's packages a test uses besides its image.
type Needs struct {
	Debug   bool // the -dbg package, for its vmlinux with DWARF
	Headers bool // linux-headers-<release>, its -common and linux-kbuild
}

// An Archive is what apt offers of the kernel packages QueryArchive
// asked about: each package's versions.
type Archive map[string][]string

// ErrNoApt says that apt knows no kernel of the series asked for: the
// machine is not Debian 12, or its package lists were never fetched.
var ErrNoApt = errors.New("apt knows no kernel of the series")

// QueryArchive asks apt-cache which kernels of a series and flavour
// (6.1, amd64) the archive has, and at which versions it has their
// image (signed or not), -dbg, headers and kbuild packages. It reads
// apt's package lists only; they are as fresh as the last apt-get
// update.
func QueryArchive(ctx context.Context, series, flavour string) (Archive, error) {
	out, err := output(ctx, "apt-cache", "pkgnames", "linux-image-"+series+".")
	if err != nil {
		return nil, err
	}
	var names []string
	for _, name := range strings.Fields(string(out)) {
		if m := imageRE(series, flavour).FindStringSubmatch(name); m != nil {
			names = append(names, Kernel{Release: m[1]}.packages()...)
		}
	}
	if len(names) == 0 {
		return nil, fmt.Errorf("%w: apt-cache pkgnames lists no linux-image-%s.*-%s", ErrNoApt, series, flavour)
	}
	slices.Sort(names)
	names = slices.Compact(names)
	out, err = output(ctx, "apt-cache", append([]string{"madison"}, names...)...)
	if err != nil {
		return nil, err
	}
	return parseMadison(out), nil
}

// imageRE matches the names of a series' image packages of one flavour,
// signed or not, and captures the release.
func imageRE(series, flavour string) *regexp.Regexp {
	return regexp.MustCompile(`^linux-image-(` + regexp.QuoteMeta(series) + `\.\d+-\d+-` + regexp.QuoteMeta(flavour) + `)(?:-unsigned)?$`)
}

// parseMadison reads apt-cache madison's table, one line a package,
// version and origin, keeping the binary packages' versions (lines of
// an index of Sources are source packages).
func parseMadison(out []byte) Archive {
	a := Archive{}
	sc := bufio.NewScanner(bytes.NewReader(out))
	for sc.Scan() {
		f := strings.Split(sc.Text(), "|")
		if len(f) != 3 || !strings.HasSuffix(strings.TrimSpace(f[2]), " Packages") {
			continue
		}
		name, version := strings.TrimSpace(f[0]), strings.TrimSpace(f[1])
		if !slices.Contains(a[name], version) {
			a[name] = append(a[name], version)
		}
	}
	return a
}

// has reports whether the archive offers pkg at version.
func (a Archive) has(pkg, version string) bool { return slices.Contains(a[pkg], version) }

// packages returns the names of k's packages: its image's, the unsigned
// build's, and the -dbg, headers and kbuild packages'.
func (k Kernel) packages() []string {
	names := []string{"linux-image-" + k.Release, "linux-image-" + k.Release + "-unsigned", k.DebugPackage()}
	if pkgs, err := k.headerPackages(); err == nil {
		for _, p := range pkgs {
			name, _, _ := strings.Cut(p, "=")
			names = append(names, name)
		}
	}
	return names
}

// missing returns what of k the archive lacks at k's version, as
// name=version, for the image and what needs names. When the signed
// image is absent and the unsigned one there, k takes that.
func (a Archive) missing(k *Kernel, needs Needs) []string {
	var lack []string
	switch {
	case a.has("linux-image-"+k.Release, k.Version):
		k.Unsigned = false
	case a.has("linux-image-"+k.Release+"-unsigned", k.Version):
		k.Unsigned = true
	default:
		lack = append(lack, "linux-image-"+k.Release+"="+k.Version)
	}
	if needs.Debug && !a.has(k.DebugPackage(), k.Version) {
		lack = append(lack, k.DebugPackage()+"="+k.Version)
	}
	if needs.Headers {
		pkgs, err := k.headerPackages()
		if err != nil {
			return append(lack, err.Error())
		}
		for _, p := range pkgs {
			name, version, _ := strings.Cut(p, "=")
			if !a.has(name, version) {
				lack = append(lack, p)
			}
		}
	}
	return lack
}

// Cached returns the kernels of a series and flavour that cache holds
// with all that needs names, fetched whole by FetchKernel, FetchDebug
// and FetchHeaders: a kernel the archive has dropped can still run.
func Cached(cache, series, flavour string, needs Needs) []Kernel {
	ents, _ := os.ReadDir(cache)
	re := imageRE(series, flavour)
	var ks []Kernel
	for _, e := range ents {
		release, version, ok := strings.Cut(e.Name(), "_")
		if !ok || !e.IsDir() || !re.MatchString("linux-image-"+release) {
			continue
		}
		k := Kernel{Release: release, Version: version}
		if k.cached(cache, needs) {
			ks = append(ks, k)
		}
	}
	return ks
}

// cached reports whether cache holds k with what needs names.
func (k Kernel) cached(cache string, needs Needs) bool {
	dir := filepath.Join(cache, k.Release+"_"+k.Version)
	if !exists(filepath.Join(dir, "vmlinuz-"+k.Release)) || !exists(filepath.Join(dir, "config-"+k.Release)) {
		return false
	}
	if needs.Debug && !exists(debugPath(cache, k)) {
		return false
	}
	return !needs.Headers || exists(filepath.Join(headersDir(cache, k), "Makefile"))
}

// Choose returns the kernels a test can run on, best first, each with
// its image and what needs names all in the archive at its version or
// all in the cache (cached lists those, from Cached). With no pins they
// are every kernel of the archive's and the cache's, newest first; with
// pins, the pinned kernels that qualify, in the pins' order (a test
// whose expectations hold for given builds only). When none qualifies,
// the error names what each candidate lacks.
func Choose(a Archive, cached []Kernel, needs Needs, pins ...Kernel) ([]Kernel, error) {
	candidates := pins
	if len(pins) == 0 {
		seen := map[Kernel]bool{}
		add := func(k Kernel) {
			if !seen[k] {
				seen[k] = true
				candidates = append(candidates, k)
			}
		}
		for name, versions := range a {
			if release, ok := strings.CutPrefix(name, "linux-image-"); ok && !strings.HasSuffix(release, "-dbg") {
				release = strings.TrimSuffix(release, "-unsigned")
				for _, v := range versions {
					add(Kernel{Release: release, Version: v})
				}
			}
		}
		for _, k := range cached {
			add(k)
		}
		slices.SortFunc(candidates, func(x, y Kernel) int {
			if c := CompareVersions(y.Version, x.Version); c != 0 {
				return c
			}
			return strings.Compare(y.Release, x.Release)
		})
	}
	var ok []Kernel
	var why []string
	for _, k := range candidates {
		if slices.ContainsFunc(cached, func(c Kernel) bool { return c.Release == k.Release && c.Version == k.Version }) {
			ok = append(ok, Kernel{Release: k.Release, Version: k.Version})
			continue
		}
		if lack := a.missing(&k, needs); len(lack) > 0 {
			why = append(why, fmt.Sprintf("%s %s lacks %s", k.Release, k.Version, strings.Join(lack, ", ")))
			continue
		}
		ok = append(ok, k)
	}
	if len(ok) == 0 {
		if len(why) == 0 {
			return nil, errors.New("no kernel in the archive or the cache")
		}
		if len(why) > 3 {
			why = append(why[:3], fmt.Sprintf("and %d older", len(why)-3))
		}
		return nil, fmt.Errorf("no kernel has all its packages in the archive or the cache: %s", strings.Join(why, "; "))
	}
	return ok, nil
}

// CompareVersions compares two Debian package versions as dpkg does:
// negative when x is older than y, zero when equal, positive when newer.
// A version is [epoch:]upstream[-revision]; upstream and revision
// compare in runs of non-digits, where ~ sorts before everything, even
// the end, and letters before other characters, and runs of digits, by
// their numbers.
func CompareVersions(x, y string) int {
	xe, xu, xr := splitVersion(x)
	ye, yu, yr := splitVersion(y)
	if xe != ye {
		if xe < ye {
			return -1
		}
		return 1
	}
	if c := comparePart(xu, yu); c != 0 {
		return c
	}
	return comparePart(xr, yr)
}

func splitVersion(v string) (epoch int, upstream, revision string) {
	if e, rest, ok := strings.Cut(v, ":"); ok {
		epoch, _ = strconv.Atoi(e)
		v = rest
	}
	if i := strings.LastIndexByte(v, '-'); i >= 0 {
		return epoch, v[:i], v[i+1:]
	}
	return epoch, v, ""
}

func comparePart(x, y string) int {
	for x != "" || y != "" {
		// The non-digit runs, a character at a time.
		for (x != "" && !isDigit(x[0])) || (y != "" && !isDigit(y[0])) {
			cx, cy := order(x), order(y)
			if cx != cy {
				if cx < cy {
					return -1
				}
				return 1
			}
			x, y = x[1:], y[1:]
		}
		// The digit runs, by value.
		var nx, ny string
		nx, x = digits(x)
		ny, y = digits(y)
		nx, ny = strings.TrimLeft(nx, "0"), strings.TrimLeft(ny, "0")
		if len(nx) != len(ny) {
			if len(nx) < len(ny) {
				return -1
			}
			return 1
		}
		if c := strings.Compare(nx, ny); c != 0 {
			return c
		}
	}
	return 0
}

// order is the weight of the first character of a non-digit run, where
// the end of the run (a digit, or the end of the string) weighs 0.
func order(s string) int {
	switch {
	case s == "" || isDigit(s[0]):
		return 0
	case s[0] == '~':
		return -1
	case 'a' <= s[0]|0x20 && s[0]|0x20 <= 'z':
		return int(s[0])
	default:
		return int(s[0]) + 256
	}
}

func isDigit(c byte) bool { return '0' <= c && c <= '9' }

func digits(s string) (run, rest string) {
	i := 0
	for i < len(s) && isDigit(s[i]) {
		i++
	}
	return s[:i], s[i:]
}

// output runs a command and returns its standard output; its error
// carries the command's stderr. Messages are in English (LC_ALL=C),
// which FetchError.Offline reads.
func output(ctx context.Context, name string, args ...string) ([]byte, error) {
	cmd := exec.CommandContext(ctx, name, args...)
	cmd.Env = append(os.Environ(), "LC_ALL=C")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		msg := strings.TrimSpace(stderr.String())
		if msg == "" {
			return nil, fmt.Errorf("%s: %w", name, err)
		}
		return nil, fmt.Errorf("%s: %w: %s", name, err, msg)
	}
	return out, nil
}
