package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
)

// A mutation handles one call and returns the exit code. Each breaks one
// promise and is tofu everywhere else.
type mutation func(c *call) (int, error)

var mutations = map[string]mutation{
	// identity breaks nothing: the planted survivor the matrix must report.
	"identity":            func(c *call) (int, error) { return c.exec(c.args) },
	"ignore-moved":        stripping(removeBlocks("moved")),
	"ignore-import":       stripping(removeBlocks("import")),
	"ignore-cbd":          stripping(dropCreateBeforeDestroy),
	"no-refresh":          noRefresh,
	"stale-plan-ok":       stalePlanOK,
	"drop-one-create":     dropOneCreate,
	"lost-interrupt":      lostInterrupt,
	"destroy-leaks-one":   destroyLeaksOne,
	"lying-summary":       lyingSummary,
	"state-forgets":       stateForgets,
	"exit-code-lies":      exitCodeLies,
	"parallelism-ignored": parallelismIgnored,
}

// exitCodeLies reports a plan with changes as one without: under
// -detailed-exitcode its exit 2 becomes 0, so a pipeline gating on it
// sees nothing to apply.
func exitCodeLies(c *call) (int, error) {
	if cmd, _ := command(c.args); cmd != "plan" || !has(c.args, "-detailed-exitcode") {
		return c.exec(c.args)
	}
	code, err := c.run(c.args, os.Stdout, false)
	if code == 2 {
		code = 0
	}
	return code, err
}

// parallelismIgnored drops -parallelism=N, so the engine walks its graph
// at its default of 10 whatever it was told.
func parallelismIgnored(c *call) (int, error) {
	return c.exec(withoutFlag(c.args, "-parallelism"))
}

// withoutFlag returns args without flag (as -flag=... or -flag).
func withoutFlag(args []string, flag string) []string {
	var out []string
	for _, a := range args {
		if a == flag || strings.HasPrefix(a, flag+"=") {
			continue
		}
		out = append(out, a)
	}
	return out
}

// stripping runs every command but version on the root with e applied to
// its configuration files, and puts them back afterwards: the engine
// behaves as if it did not understand the construct e removes.
func stripping(e edit) mutation {
	return func(c *call) (int, error) {
		if cmd, _ := command(c.args); cmd == "version" || cmd == "" {
			return c.exec(c.args)
		}
		dir, err := os.Getwd()
		if err != nil {
			return 1, err
		}
		restore, err := strip(dir, e)
		if err != nil {
			return 1, err
		}
		code, err := c.run(c.args, os.Stdout, false)
		if rerr := restore(); err == nil {
			err = rerr
		}
		return code, err
	}
}

// noRefresh plans and applies with -refresh=false: it never sees drift.
func noRefresh(c *call) (int, error) {
	cmd, _ := command(c.args)
	if (cmd == "plan" || (cmd == "apply" && planFile(c.args) < 0)) && !has(c.args, "-refresh") {
		return c.exec(insert(c.args, "-refresh=false"))
	}
	return c.exec(c.args)
}

// stalePlanOK applies a saved plan by planning the configuration afresh,
// so it never refuses a stale plan.
func stalePlanOK(c *call) (int, error) {
	if cmd, _ := command(c.args); cmd == "apply" {
		if i := planFile(c.args); i >= 0 {
			args := append(append([]string{}, c.args[:i]...), c.args[i+1:]...)
			return c.exec(append(args, "-auto-approve"))
		}
	}
	return c.exec(c.args)
}

// lostInterrupt ignores SIGINT and SIGTERM during an apply and lets it run
// to its end, as if the engine had no signal handling.
func lostInterrupt(c *call) (int, error) {
	if cmd, _ := command(c.args); cmd != "apply" {
		return c.exec(c.args)
	}
	return c.run(c.args, os.Stdout, true)
}

// destroyLeaksOne removes one resource from the state before a destroy,
// so `apply -destroy` leaves its object behind and still exits 0 with
// tofu's own (smaller) count.
func destroyLeaksOne(c *call) (int, error) {
	cmd, _ := command(c.args)
	if cmd == "destroy" || (cmd == "apply" && has(c.args, "-destroy") && planFile(c.args) < 0) {
		if _, err := c.forgetOne(); err != nil {
			return 1, err
		}
	}
	return c.exec(c.args)
}

// stateForgets drops one resource from the state after every apply that
// succeeded: the object stays on the cluster, unmanaged.
func stateForgets(c *call) (int, error) {
	cmd, _ := command(c.args)
	if cmd != "apply" || has(c.args, "-destroy") {
		return c.exec(c.args)
	}
	code, err := c.run(c.args, os.Stdout, false)
	if code != 0 || err != nil {
		return code, err
	}
	_, err = c.forgetOne()
	return code, err
}

// forgetOne runs `state rm` of the last managed address the state lists
// and returns it ("" when the state is empty).
func (c *call) forgetOne() (string, error) {
	out, err := c.quiet("state", "list")
	if err != nil {
		if strings.Contains(err.Error(), "No state file was found") {
			return "", nil
		}
		return "", err
	}
	var managed []string
	for _, l := range strings.Split(out, "\n") {
		if l = strings.TrimSpace(l); l != "" && !strings.HasPrefix(l, "data.") && !strings.Contains(l, ".data.") {
			managed = append(managed, l)
		}
	}
	if len(managed) == 0 {
		return "", nil
	}
	sort.Strings(managed)
	victim := managed[len(managed)-1]
	if _, err := c.quiet("state", "rm", victim); err != nil {
		return "", err
	}
	return victim, nil
}

var planLine = regexp.MustCompile(`^(Plan: (?:\d+ to import, )?)(\d+)( to add, .*)$`)

// lie rewrites a plan summary line so that it counts one more to add than
// the plan holds, printed plain or as the plan -json stream's
// change_summary; every other line passes unchanged. A plan of no changes
// is told true, in both forms.
func lie(line string) string {
	body := strings.TrimRight(line, "\r\n")
	if strings.HasPrefix(body, `{"@level"`) {
		return lieJSON(body) + line[len(body):]
	}
	m := planLine.FindStringSubmatch(body)
	if m == nil {
		return line
	}
	n, _ := strconv.Atoi(m[2])
	return m[1] + strconv.Itoa(n+1) + m[3] + line[len(body):]
}

// lieJSON is lie for one line of the stream.
func lieJSON(body string) string {
	var m map[string]any
	if json.Unmarshal([]byte(body), &m) != nil || m["type"] != "change_summary" {
		return body
	}
	ch, _ := m["changes"].(map[string]any)
	if ch == nil || ch["operation"] != "plan" {
		return body
	}
	total := 0.0
	for _, k := range []string{"add", "change", "remove", "import"} {
		n, _ := ch[k].(float64)
		total += n
	}
	if total == 0 {
		return body
	}
	add, _ := ch["add"].(float64)
	ch["add"] = add + 1
	if msg, ok := m["@message"].(string); ok {
		m["@message"] = lie(msg)
	}
	out, err := json.Marshal(m)
	if err != nil {
		return body
	}
	return string(out)
}

// lyingSummary prints a plan summary line that disagrees with the plan
// it saved: one more to add.
func lyingSummary(c *call) (int, error) {
	if cmd, _ := command(c.args); cmd != "plan" {
		return c.exec(c.args)
	}
	pr, pw := io.Pipe()
	copied := make(chan error, 1)
	go func() {
		r := bufio.NewReader(pr)
		for {
			line, err := r.ReadString('\n')
			if line != "" {
				if _, werr := io.WriteString(os.Stdout, lie(line)); werr != nil {
					copied <- werr
					io.Copy(io.Discard, pr)
					return
				}
			}
			if err != nil {
				copied <- nil
				return
			}
		}
	}()
	code, err := c.run(c.args, pw, false)
	pw.Close()
	if cerr := <-copied; err == nil {
		err = cerr
	}
	return code, err
}

// planJSON is the part of `show -json` of a plan that dropOneCreate reads.
type planJSON struct {
	ResourceChanges []struct {
		Address string `json:"address"`
		Mode    string `json:"mode"`
		Change  struct {
			Actions []string `json:"actions"`
		} `json:"change"`
	} `json:"resource_changes"`
}

// creates and others split a plan's managed changes into pure creates and
// everything else that acts, both in the plan's (address) order.
func (p planJSON) split() (creates, others []string) {
	for _, rc := range p.ResourceChanges {
		if rc.Mode != "managed" {
			continue
		}
		a := strings.Join(rc.Change.Actions, "+")
		switch a {
		case "create":
			creates = append(creates, rc.Address)
		case "no-op", "read", "":
		default:
			others = append(others, rc.Address)
		}
	}
	return creates, others
}

// dropOneCreate applies every planned change but the last planned create
// (by address, so that of a count the highest index goes missing),
// by applying with -target of all the others: tofu prints its own summary
// of what it did and exits 0. Applies with fewer than two creates are
// left alone, so the mutant is visible only where a create can go missing
// among others.
func dropOneCreate(c *call) (int, error) {
	cmd, _ := command(c.args)
	if cmd != "apply" || planFile(c.args) >= 0 || has(c.args, "-destroy") || has(c.args, "-target") {
		return c.exec(c.args)
	}
	dir, err := os.MkdirTemp("", "gauntlet-mutant-")
	if err != nil {
		return 1, err
	}
	defer os.RemoveAll(dir)
	out := filepath.Join(dir, "drop.tfplan")
	var planArgs []string
	for i, a := range c.args {
		if _, ci := command(c.args); i == ci {
			planArgs = append(planArgs, "plan")
			continue
		}
		if a != "-auto-approve" {
			planArgs = append(planArgs, a)
		}
	}
	if _, err := c.quiet(append(planArgs, "-out="+out)...); err != nil {
		return 1, err
	}
	raw, err := c.quiet("show", "-json", out)
	if err != nil {
		return 1, err
	}
	var p planJSON
	if err := json.Unmarshal([]byte(raw[strings.IndexByte(raw, '{'):]), &p); err != nil {
		return 1, fmt.Errorf("show -json: %w", err)
	}
	creates, others := p.split()
	sort.Strings(creates)
	if len(creates) < 2 {
		os.RemoveAll(dir)
		return c.exec(c.args)
	}
	args := append([]string{}, c.args...)
	for _, a := range append(creates[:len(creates)-1], others...) {
		args = insert(args, "-target="+a)
	}
	os.RemoveAll(dir)
	return c.exec(args)
}
