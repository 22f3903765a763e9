package cli

import (
	"fmt"
	"io"
	"maps"
	"slices"
	"strings"
)

// Markdown writes the CLI reference: the exit codes, the command table
// and, per command, its synopsis, paragraph, flags and examples - all
// from the command table, so it is regenerated, never edited. regenerate
// is the command that rewrites it, said at the top.
func (a *App) Markdown(w io.Writer, regenerate string) error {
	b := &strings.Builder{}
	fmt.Fprintf(b, "# %s command-line reference\n\n", a.Name)
	fmt.Fprintf(b, "<!-- Generated from the command table in tools/gauntlet by `%s`; do not edit by hand. A test fails when this file is out of date. -->\n\n", regenerate)
	fmt.Fprintf(b, "%s\n\n", a.Doc)
	fmt.Fprintf(b, "Flags go before or after the positional arguments (`--` ends the flags); `%s <command> -h` prints a command's section of this page.\n\n", a.Name)
	fmt.Fprintf(b, "## Exit codes\n\nEvery command exits with one of these.\n\n| code | meaning |\n|---|---|\n")
	for _, e := range a.exits() {
		fmt.Fprintf(b, "| %s | %s |\n", e.Code, cell(e.Meaning))
	}
	if a.ExitNote != "" {
		fmt.Fprintf(b, "\n%s\n", a.ExitNote)
	}
	fmt.Fprintf(b, "\n## Commands\n\n| command | what it does |\n|---|---|\n")
	for _, c := range a.Commands {
		fmt.Fprintf(b, "| [`%s`](#%s) | %s |\n", c.Name, anchor(a.Name+" "+c.Name), cell(c.Summary))
	}
	var envs []string
	uses := map[string]map[string][]string{} // variable -> flag -> commands
	for i := range a.Commands {
		c := &a.Commands[i]
		fmt.Fprintf(b, "\n## %s %s\n\n```\n%s\n```\n\n%s\n", a.Name, c.Name, synopsis(a.Name, c), c.Doc)
		flags := Flags(c)
		if len(flags) > 0 {
			fmt.Fprintf(b, "\n| flag | default | env | what it does |\n|---|---|---|---|\n")
			for _, f := range flags {
				def, env := "", ""
				switch {
				case f.Described:
					def = cell(f.Default)
				case f.Default != "":
					def = "`" + f.Default + "`"
				}
				if f.Env != "" {
					env = "`" + f.Env + "`"
					if uses[f.Env] == nil {
						envs = append(envs, f.Env)
						uses[f.Env] = map[string][]string{}
					}
					uses[f.Env][f.Name] = append(uses[f.Env][f.Name], c.Name)
				}
				fmt.Fprintf(b, "| `%s` | %s | %s | %s |\n", f.Spelling(), def, env, cell(f.Usage))
			}
		}
		if len(c.Examples) > 0 {
			fmt.Fprintf(b, "\n```sh\n")
			for i, e := range c.Examples {
				if i > 0 {
					b.WriteString("\n")
				}
				fmt.Fprintf(b, "# %s\n%s\n", e.What, e.Command)
			}
			fmt.Fprintf(b, "```\n")
		}
	}
	if len(envs) > 0 {
		fmt.Fprintf(b, "\n## Environment variables that set flag defaults\n\nA flag given on the command line wins over its variable.\n\n")
		for _, e := range envs {
			var by []string
			for _, f := range slices.Sorted(maps.Keys(uses[e])) {
				by = append(by, fmt.Sprintf("`--%s` of %s", f, strings.Join(uses[e][f], ", ")))
			}
			fmt.Fprintf(b, "- `%s`: %s\n", e, strings.Join(by, "; "))
		}
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// cell makes text safe inside a markdown table cell.
func cell(s string) string {
	return strings.ReplaceAll(strings.Join(strings.Fields(s), " "), "|", `\|`)
}

// anchor is the heading anchor GitHub makes of h.
func anchor(h string) string {
	var b strings.Builder
	for _, r := range strings.ToLower(h) {
		switch {
		case r >= 'a' && r <= 'z', r >= '0' && r <= '9', r == '-', r == '_':
			b.WriteRune(r)
		case r == ' ':
			b.WriteRune('-')
		}
	}
	return b.String()
}
