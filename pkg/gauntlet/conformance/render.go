package conformance

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
)

// symbols are the matrix's one-glyph proofs.
var symbols = map[Proof]string{Proven: "proven", Partial: "partial", NotRun: "not run", Unprovable: "unprovable",
	Unbacked: "UNBACKED", Stale: "STALE", Failed: "FAILED"}

// WriteText writes the report for a terminal: one line per requirement,
// then every cell that is not proven, then the ledger's problems.
func WriteText(w io.Writer, r *Report) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "requirement\tproof\twhy")
	for _, s := range r.Requirements {
		why := s.Why
		if s.Gap != "" {
			why += " [gap: " + s.Gap + "]"
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\n", s.ID, s.Proof, why)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	fmt.Fprintf(w, "\n%d requirements: %s. %d verified ledger rows.\n", len(r.Requirements), r.Summary(), r.Rows)
	if r.History > 0 {
		fmt.Fprintf(w, "%d first-format rows are history: recorded before cell keys, content hashes and check-level proof; verified against their run folders, never a proof.\n", r.History)
	}
	if len(r.Columns) > 0 {
		fmt.Fprintln(w, "\nmatrix (requirement x cell: estate / substrate / engine / oracle; * required):")
		for i, c := range r.Columns {
			fmt.Fprintf(w, "  [%d] %s\n", i+1, c)
		}
		tw = tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
		head := "requirement"
		for i := range r.Columns {
			head += fmt.Sprintf("\t[%d]", i+1)
		}
		fmt.Fprintln(tw, head)
		for _, s := range r.Requirements {
			fmt.Fprintln(tw, s.ID+"\t"+strings.Join(matrixRow(s, r.Columns), "\t"))
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

func matrixRow(s Status, cols []Cell) []string {
	var out []string
	for _, c := range cols {
		cell := "-"
		for _, cp := range s.Cells {
			if cp.Cell == c {
				cell = symbols[cp.Proof]
				if cp.Required {
					cell += "*"
				}
			}
		}
		out = append(out, cell)
	}
	return out
}

// WriteMarkdown writes status.md: the headline, the gate, the matrix and
// every requirement with its cells.
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
	if len(r.Columns) > 0 {
		b.WriteString("## Matrix\n\nRequirement x cell (estate / substrate / engine / oracle); `*` marks a cell the registry requires.\n\n| requirement |")
		for _, c := range r.Columns {
			fmt.Fprintf(b, " %s |", mdEscape(c.String()))
		}
		b.WriteString("\n|---|")
		for range r.Columns {
			b.WriteString("---|")
		}
		b.WriteString("\n")
		for _, s := range r.Requirements {
			fmt.Fprintf(b, "| %s | %s |\n", s.ID, strings.Join(matrixRow(s, r.Columns), " | "))
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
