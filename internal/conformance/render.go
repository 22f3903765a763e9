package conformance

import (
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"sort"
	"strings"
	"text/tabwriter"

	"github.com/gauntlet-k8s/gauntlet/internal/wordwrap"
)

// symbols are the matrix's one-glyph proofs.
var symbols = map[Proof]string{Proven: "proven", Partial: "partial", NotRun: "not run", Unprovable: "unprovable",
	Unbacked: "UNBACKED", Stale: "STALE", Failed: "FAILED"}

// whyWidth is where the reason column wraps: a terminal of ~140 columns
// holds the requirement, the substrates and the reason side by side.
const whyWidth = 90

// WriteText writes the report for a terminal: one line per requirement,
// then each estate's requirements by substrate, then the ledger's
// problems. Reasons wrap, so the view stays readable however many
// estates and engines the ledger holds.
func WriteText(w io.Writer, r *Report) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "requirement\tproof\twhy")
	for _, s := range r.Requirements {
		why := s.Why
		if s.Gap != "" {
			why += " [gap: " + s.Gap + "]"
		}
		for i, l := range wordwrap.Lines(why, whyWidth) {
			if i == 0 {
				fmt.Fprintf(tw, "%s\t%s\t%s\n", s.ID, s.Proof, l)
			} else {
				fmt.Fprintf(tw, "\t\t%s\n", l)
			}
		}
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	fmt.Fprintf(w, "\n%d requirements: %s. %d verified ledger rows.\n", len(r.Requirements), r.Summary(), r.Rows)
	if r.History > 0 {
		fmt.Fprintf(w, "%d first-format rows are history: recorded before cell keys, content hashes and check-level proof; verified against their run folders, never a proof.\n", r.History)
	}
	for _, g := range r.Groups() {
		fmt.Fprintf(w, "\n%s\n", g.Estate)
		for _, p := range g.Pairs {
			fmt.Fprintf(w, "  engine %s, oracle %s%s\n", p.Engine, p.Oracle, pinnedNote(p))
			tw = tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
			fmt.Fprintln(tw, "    requirement\t"+strings.Join(p.Substrates, "\t")+"\twhy")
			pad := strings.Repeat("\t", len(p.Substrates)+1)
			for _, row := range p.Rows {
				for i, l := range wordwrap.Lines(row.Why, whyWidth) {
					if i == 0 {
						fmt.Fprintf(tw, "    %s\t%s\t%s\n", row.ID, strings.Join(row.Cells, "\t"), l)
					} else {
						fmt.Fprintf(tw, "    %s%s\n", pad, l)
					}
				}
			}
			if err := tw.Flush(); err != nil {
				return err
			}
		}
		if len(g.Pairs) == 0 {
			fmt.Fprintln(w, "  "+noRun)
		}
	}
	if len(r.Columns) > 0 {
		fmt.Fprintln(w, "\n(* a cell a gate requires: the pinned pair, where the estate exercises the requirement)")
	}
	if len(r.Estates) > 0 {
		fmt.Fprintf(w, "\nEstate cells (the pinned pair; * required: every estate on %s, and any cell whose latest run failed)\n",
			strings.Join(r.EveryEstateSubstrates(), ", "))
		tw = tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
		fmt.Fprintln(tw, "  estate\tsubstrate\tproof\tproves\twhy")
		for _, e := range r.Estates {
			for i, l := range wordwrap.Lines(e.Why, whyWidth) {
				if i == 0 {
					fmt.Fprintf(tw, "  %s\t%s\t%s%s\t%d\t%s\n", e.Estate, e.Substrate, e.Proof, star(e.Required), len(e.Proves), l)
				} else {
					fmt.Fprintf(tw, "  \t\t\t\t%s\n", l)
				}
			}
		}
		if err := tw.Flush(); err != nil {
			return err
		}
	}
	for _, p := range r.Problems {
		fmt.Fprintf(w, "LEDGER PROBLEM %s\n", p)
	}
	return nil
}

func star(required bool) string {
	if required {
		return "*"
	}
	return ""
}

func pinnedNote(p PairGroup) string {
	if p.Required {
		return " (the pinned pair)"
	}
	return " (shown, never counted)"
}

// EstateGroup is one estate's part of the report, by engine pair.
type EstateGroup struct {
	Estate string
	// Pairs is empty for an estate of the corpus with no recorded run.
	Pairs []PairGroup
}

const noRun = "no run recorded: no requirement waits for it until the registry lists it or a run of it is recorded"

// PairGroup is one engine and oracle on one estate: a row per
// requirement with a cell there, a column per substrate.
type PairGroup struct {
	Engine, Oracle string
	// Required: some cell of it counts for a gate.
	Required   bool
	Substrates []string
	Rows       []PairRow
}

// PairRow is one requirement's cells on an estate and engine pair, one per
// substrate, and the reason of its worst cell.
type PairRow struct {
	ID    string
	Cells []string
	Why   string
}

// Groups arranges the cells by estate, then engine pair (those a gate
// counts first), then substrate: a column per substrate instead of one per
// cell, so the view grows in rows, not columns, as estates are added.
func (r *Report) Groups() []EstateGroup {
	type pairKey struct{ estate, engine, oracle string }
	byPair := map[pairKey]*PairGroup{}
	var estates []string
	for _, s := range r.Requirements {
		for _, ep := range s.Estates {
			estates = append(estates, ep.Estate)
		}
		for _, cp := range s.Cells {
			k := pairKey{cp.Cell.Estate, cp.Cell.Engine, cp.Cell.Oracle}
			p := byPair[k]
			if p == nil {
				p = &PairGroup{Engine: cp.Cell.Engine, Oracle: cp.Cell.Oracle}
				byPair[k] = p
				estates = append(estates, cp.Cell.Estate)
			}
			p.Required = p.Required || cp.Required
			if !slices.Contains(p.Substrates, cp.Cell.Substrate) {
				p.Substrates = append(p.Substrates, cp.Cell.Substrate)
			}
		}
	}
	for _, p := range byPair {
		slices.SortFunc(p.Substrates, func(a, b string) int { return slices.Index(Substrates, a) - slices.Index(Substrates, b) })
	}
	sort.Strings(estates)
	estates = slices.Compact(estates)
	var out []EstateGroup
	for _, e := range estates {
		g := EstateGroup{Estate: e}
		var keys []pairKey
		for k := range byPair {
			if k.estate == e {
				keys = append(keys, k)
			}
		}
		sort.Slice(keys, func(i, j int) bool {
			a, b := byPair[keys[i]], byPair[keys[j]]
			if a.Required != b.Required {
				return a.Required
			}
			return keys[i].engine+keys[i].oracle < keys[j].engine+keys[j].oracle
		})
		for _, k := range keys {
			p := *byPair[k]
			for _, s := range r.Requirements {
				row, worst := PairRow{ID: s.ID}, -1
				for _, sub := range p.Substrates {
					cell := "-"
					for _, cp := range s.Cells {
						if cp.Cell.Estate != e || cp.Cell.Engine != k.engine || cp.Cell.Oracle != k.oracle || cp.Cell.Substrate != sub {
							continue
						}
						cell = symbols[cp.Proof]
						if cp.Required {
							cell += "*"
						}
						// The reason shown is the worst cell's, required ones first.
						if score := rank[cp.Proof] + boolInt(!cp.Required)*len(rank); worst < 0 || score < worst {
							row.Why, worst = sub+": "+cp.Why, score
							if cp.Declined != "" && !cp.Required {
								row.Why += " (declined by estate.yaml: " + cp.Declined + ")"
							}
						}
					}
					row.Cells = append(row.Cells, cell)
				}
				if worst >= 0 {
					p.Rows = append(p.Rows, row)
				}
			}
			g.Pairs = append(g.Pairs, p)
		}
		out = append(out, g)
	}
	return out
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}

// WriteMarkdown writes status.md: the headline, the gate, each estate's
// requirements by substrate, and every requirement with its reason.
func WriteMarkdown(w io.Writer, r *Report, g Gate) error {
	b := &strings.Builder{}
	fmt.Fprintf(b, "# Conformance status\n\n%d requirements: %s. Gate (`--require-all`): exit %d. Ledger: %d verified rows, %d history rows, %d problem(s).\n\n",
		len(r.Requirements), r.Summary(), g.Code, r.Rows, r.History, len(r.Problems))
	if len(r.Problems) > 0 {
		b.WriteString("## Ledger problems\n\n")
		for _, p := range r.Problems {
			fmt.Fprintf(b, "- %s\n", mdEscape(p.String()))
		}
		b.WriteString("\n")
	}
	b.WriteString("## Requirements\n\n| requirement | proof | why |\n|---|---|---|\n")
	for _, s := range r.Requirements {
		why := s.Why
		if s.Gap != "" {
			why += " (documented gap: " + s.Gap + ")"
		}
		fmt.Fprintf(b, "| %s | %s | %s |\n", s.ID, s.Proof, mdEscape(why))
	}
	if len(r.Estates) > 0 {
		b.WriteString("\n## Estate cells\n\nEach estate's latest run with the pinned pair per substrate, judged against its estate.yaml; `*` marks a cell a gate requires.\n\n| estate | substrate | proof | proves | why |\n|---|---|---|---|---|\n")
		for _, e := range r.Estates {
			fmt.Fprintf(b, "| %s | %s | %s%s | %s | %s |\n", e.Estate, e.Substrate, e.Proof, star(e.Required), strings.Join(e.Proves, ", "), mdEscape(e.Why))
		}
	}
	if groups := r.Groups(); len(groups) > 0 {
		b.WriteString("\n## By estate\n\nOne table per estate and engine pair, a column per substrate; `*` marks a cell a gate requires (the pinned pair, where the estate exercises the requirement).\n")
		for _, eg := range groups {
			fmt.Fprintf(b, "\n### %s\n", eg.Estate)
			if len(eg.Pairs) == 0 {
				b.WriteString("\n" + noRun + "\n")
			}
			for _, p := range eg.Pairs {
				fmt.Fprintf(b, "\nengine %s, oracle %s%s\n\n| requirement |", mdEscape(p.Engine), mdEscape(p.Oracle), pinnedNote(p))
				for _, sub := range p.Substrates {
					fmt.Fprintf(b, " %s |", sub)
				}
				b.WriteString(" why |\n|---|")
				for range p.Substrates {
					b.WriteString("---|")
				}
				b.WriteString("---|\n")
				for _, row := range p.Rows {
					fmt.Fprintf(b, "| %s | %s | %s |\n", row.ID, strings.Join(row.Cells, " | "), mdEscape(row.Why))
				}
			}
		}
	}
	_, err := io.WriteString(w, b.String())
	return err
}

func mdEscape(s string) string { return strings.ReplaceAll(s, "|", `\|`) }

// WriteJSON writes the report and the gate as one JSON document.
func WriteJSON(w io.Writer, r *Report, g Gate) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(struct {
		Schema string  `json:"schema"`
		Gate   Gate    `json:"gate"`
		Report *Report `json:"report"`
	}{"gauntlet.status/v1", g, r})
}
