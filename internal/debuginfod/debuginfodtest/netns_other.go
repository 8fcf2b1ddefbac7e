//go:build !linux

package debuginfodtest

import (
	"errors"
	"os/exec"
)

var errNoNetns = errors.New("the server runs in a network namespace of its own, which only Linux has")

func isolate(*exec.Cmd) error            { return errNoNetns }
func inNetns(string, func() error) error { return errNoNetns }
func loopbackUp() error                  { return errNoNetns }
