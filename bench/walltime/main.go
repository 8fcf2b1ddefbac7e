// Command walltime measures the wall time of commands: each line of its
// standard input is one command, its words separated by tabs. Every
// command is run once to warm the page cache, then -n times; its time is
// the median of those runs, taken around starting the process and
// waiting for it, with its output discarded. It prints the distribution
// of the commands' times, and with -v each command's.
//
//	walltime [-n runs] [-v] [-label text] < commands
//
// A command that fails in its warm-up run is left out and counted.
package main

import (
	"bufio"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"slices"
	"strings"
	"time"
)

func main() {
	runs := flag.Int("n", 5, "timed runs of each command")
	verbose := flag.Bool("v", false, "print each command's median")
	label := flag.String("label", "", "what the commands are, for the summary")
	flag.Parse()
	if *runs < 1 {
		fmt.Fprintln(os.Stderr, "walltime: -n must be at least 1")
		os.Exit(2)
	}
	var times []time.Duration
	failed := 0
	sc := bufio.NewScanner(os.Stdin)
	for sc.Scan() {
		args := strings.Split(sc.Text(), "\t")
		if len(args) == 0 || args[0] == "" {
			continue
		}
		if run(args) != nil {
			failed++
			continue
		}
		each := make([]time.Duration, 0, *runs)
		for range *runs {
			start := time.Now()
			err := run(args)
			d := time.Since(start)
			if err != nil {
				fmt.Fprintf(os.Stderr, "walltime: %s: %v\n", strings.Join(args, " "), err)
				os.Exit(1)
			}
			each = append(each, d)
		}
		slices.Sort(each)
		m := each[len(each)/2]
		if *verbose {
			fmt.Printf("%8.3f ms  %s\n", ms(m), strings.Join(args, " "))
		}
		times = append(times, m)
	}
	if err := sc.Err(); err != nil {
		fmt.Fprintln(os.Stderr, "walltime:", err)
		os.Exit(1)
	}
	if len(times) == 0 {
		fmt.Fprintln(os.Stderr, "walltime: no command ran")
		os.Exit(1)
	}
	slices.Sort(times)
	if len(times) == 1 {
		fmt.Printf("%s%.2f ms, median of %d runs\n", prefix(*label), ms(times[0]), *runs)
		return
	}
	q := func(p float64) float64 { return ms(times[min(len(times)-1, int(p*float64(len(times))))]) }
	fmt.Printf("%s%d commands, median of %d runs each (ms): min %.2f  p10 %.2f  median %.2f  p90 %.2f  p99 %.2f  max %.2f",
		prefix(*label), len(times), *runs, ms(times[0]), q(0.1), ms(times[(len(times)-1)/2]), q(0.9), q(0.99), ms(times[len(times)-1]))
	if failed > 0 {
		fmt.Printf("  (%d failed and left out)", failed)
	}
	fmt.Println()
}

func run(args []string) error {
	cmd := exec.Command(args[0], args[1:]...)
	return cmd.Run()
}

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

func prefix(label string) string {
	if label == "" {
		return ""
	}
	return label + ": "
}
