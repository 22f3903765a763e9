package main

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"strings"
	"syscall"
)

// call is one invocation of the engine: the tofu it wraps and the
// arguments gauntlet (or a user) gave.
type call struct {
	tofu string
	args []string
	env  []string
}

// exec replaces the mutant with tofu running args: from here on the
// process is tofu, so output, exit code and signals are tofu's own.
func (c *call) exec(args []string) (int, error) {
	err := syscall.Exec(c.tofu, append([]string{c.tofu}, args...), c.env)
	return 1, fmt.Errorf("exec %s: %w", c.tofu, err)
}

// run runs tofu as a child with the mutant's stdin and stderr, stdout
// going to out. SIGINT and SIGTERM are forwarded, so the child takes an
// interrupt exactly as tofu would, unless ignoreSignals: then the child
// runs in its own process group and never hears of them.
func (c *call) run(args []string, out io.Writer, ignoreSignals bool) (int, error) {
	cmd := exec.Command(c.tofu, args...)
	cmd.Env, cmd.Stdin, cmd.Stdout, cmd.Stderr = c.env, os.Stdin, out, os.Stderr
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL, Setpgid: ignoreSignals}
	sigs := make(chan os.Signal, 4)
	if ignoreSignals {
		signal.Ignore(syscall.SIGINT, syscall.SIGTERM)
	} else {
		signal.Notify(sigs, syscall.SIGINT, syscall.SIGTERM)
		defer signal.Stop(sigs)
	}
	if err := cmd.Start(); err != nil {
		return 1, fmt.Errorf("start %s: %w", c.tofu, err)
	}
	done := make(chan struct{})
	go func() {
		for {
			select {
			case s := <-sigs:
				cmd.Process.Signal(s)
			case <-done:
				return
			}
		}
	}()
	err := cmd.Wait()
	close(done)
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		return ee.ExitCode(), nil
	}
	if err != nil {
		return 1, err
	}
	return 0, nil
}

// quiet runs a tofu command the mutant needs for itself (state list, show
// -json) and returns its stdout; its output is never shown, as the
// engine under test would not show it either.
func (c *call) quiet(args ...string) (string, error) {
	cmd := exec.Command(c.tofu, args...)
	cmd.Env = c.env
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Run(); err != nil {
		return out.String(), fmt.Errorf("tofu %s: %w: %s", strings.Join(args, " "), err, strings.TrimSpace(errb.String()+out.String()))
	}
	return out.String(), nil
}

// command returns the subcommand and its index in args ("apply", 0),
// skipping global flags such as -chdir=DIR.
func command(args []string) (string, int) {
	for i, a := range args {
		if !strings.HasPrefix(a, "-") {
			return a, i
		}
	}
	return "", -1
}

// has reports whether args carry the flag (as -flag or -flag=...).
func has(args []string, flag string) bool {
	for _, a := range args {
		if a == flag || strings.HasPrefix(a, flag+"=") {
			return true
		}
	}
	return false
}

// planFile returns the index of the saved plan an apply was given, or -1:
// the one positional argument after the subcommand.
func planFile(args []string) int {
	_, i := command(args)
	if i < 0 {
		return -1
	}
	for j := i + 1; j < len(args); j++ {
		if !strings.HasPrefix(args[j], "-") {
			return j
		}
	}
	return -1
}

// insert returns args with extra inserted right after the subcommand.
func insert(args []string, extra ...string) []string {
	_, i := command(args)
	out := append([]string{}, args[:i+1]...)
	out = append(out, extra...)
	return append(out, args[i+1:]...)
}
