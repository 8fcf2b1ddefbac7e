// Command kinstindex builds or loads the debuginfo index of ELF images
// and looks functions up in it; bench/kinst-index.sh times it.
//
// Usage:
//
//	kinstindex [flags] image [function...]
//	kinstindex [flags] -kernel [function...]
package main

import (
	"flag"
	"fmt"
	"log"
	"math/rand/v2"
	"os"
	"strings"
	"time"

	"github.com/kdtrace/kdtrace/internal/debuginfo"
)

type files []string

func (f *files) String() string     { return strings.Join(*f, ",") }
func (f *files) Set(s string) error { *f = append(*f, s); return nil }

func main() {
	log.SetFlags(0)
	log.SetPrefix("kinstindex: ")
	var opts debuginfo.Options
	var modules files
	flag.StringVar(&opts.CacheDir, "cache", "", "index cache `dir`ectory")
	flag.BoolVar(&opts.NoCache, "nocache", false, "neither read nor write the cache")
	flag.StringVar(&opts.DebugRoot, "debug-root", "", "root of separate debug files")
	flag.Var(&modules, "module", "a module `file` (repeatable)")
	flag.BoolVar(&opts.Lazy, "lazy", false, "index only the units the functions looked up need")
	flag.IntVar(&opts.Workers, "workers", 0, "DWARF scanning goroutines (0: GOMAXPROCS)")
	kernel := flag.Bool("kernel", false, "use the running kernel and its modules instead of files")
	random := flag.Int("random", 0, "print `n` inlined functions chosen at random (fixed seed) and exit")
	sites := flag.Bool("sites", false, "print only function and caller+offset of each copy")
	flag.Parse()
	args := flag.Args()
	opts.Warn = func(w debuginfo.Warning) { log.Printf("warning: %v", w) }
	start := time.Now()
	var set *debuginfo.Set
	var err error
	switch {
	case *kernel:
		set, err = debuginfo.Kernel(opts)
	case len(args) > 0:
		set, err = debuginfo.Open(args[0], modules, opts)
		args = args[1:]
	default:
		flag.Usage()
		os.Exit(2)
	}
	if err != nil {
		log.Fatal(err)
	}
	defer set.Close()
	for _, img := range set.Images() {
		if *sites || *random > 0 {
			break
		}
		fmt.Printf("%s: %s from %s (%s) build-id %s cached=%v units=%d walked=%d subprograms=%d copies=%d unresolved=%d nested=%d\n",
			img.Module, img.Path, img.DebugPath, img.Source, img.BuildID, img.Cached,
			img.Stats.Units, img.Stats.Walked, img.Stats.Subprograms, img.Stats.Copies, img.Stats.Unresolved, img.Stats.Nested)
	}
	if !*sites && *random == 0 {
		fmt.Printf("open: %v\n", time.Since(start))
	}
	if *random > 0 {
		names, err := set.InlinedFunctions()
		if err != nil {
			log.Fatal(err)
		}
		r := rand.New(rand.NewPCG(1, 2))
		r.Shuffle(len(names), func(i, j int) { names[i], names[j] = names[j], names[i] })
		for _, n := range names[:min(*random, len(names))] {
			fmt.Println(n)
		}
		return
	}
	for _, name := range args {
		if *sites {
			fn, err := set.Lookup(name)
			if err != nil {
				log.Print(err)
				continue
			}
			for _, c := range fn.Copies {
				fmt.Printf("%s\t%s+%d\n", name, c.Caller, c.Offset)
			}
			continue
		}
		t := time.Now()
		fn, err := set.Lookup(name)
		if err != nil {
			log.Print(err)
			continue
		}
		fmt.Printf("%s: exists=%v inline=%v out-of-line=%d copies=%d (%v)\n", name, fn.Exists, fn.Inline, len(fn.OutOfLine), len(fn.Copies), time.Since(t))
		for _, c := range fn.Copies {
			fmt.Printf("\t%s:%s+%d entry=%#x entry_pc=%v ranges=%v %s:%d\n", c.Module, c.Caller, c.Offset, c.Entry, c.HasEntryPC, c.Ranges, c.CallFile, c.CallLine)
		}
	}
}
