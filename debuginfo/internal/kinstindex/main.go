// Command kinstindex builds or loads the debuginfo index of ELF images
// and looks functions up in it; bench/kinst-index.sh times it.
//
// Usage:
//
//	kinstindex [-cache dir] [-nocache] [-debug-root dir] [-module file]... image [function...]
package main

import (
	"flag"
	"fmt"
	"log"
	"os"
	"strings"
	"time"

	"github.com/kdtrace/kdtrace/debuginfo"
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
	flag.Parse()
	if flag.NArg() < 1 {
		flag.Usage()
		os.Exit(2)
	}
	opts.Warn = func(w debuginfo.Warning) { log.Printf("warning: %v", w) }
	start := time.Now()
	set, err := debuginfo.Open(flag.Arg(0), modules, opts)
	if err != nil {
		log.Fatal(err)
	}
	defer set.Close()
	for _, img := range set.Images() {
		fmt.Printf("%s: %s from %s (%s) build-id %s cached=%v units=%d subprograms=%d copies=%d unresolved=%d\n",
			img.Module, img.Path, img.DebugPath, img.Source, img.BuildID, img.Cached,
			img.Stats.Units, img.Stats.Subprograms, img.Stats.Copies, img.Stats.Unresolved)
	}
	fmt.Printf("open: %v\n", time.Since(start))
	for _, name := range flag.Args()[1:] {
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
