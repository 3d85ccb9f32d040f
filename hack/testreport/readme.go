package main

import (
	"flag"
	"fmt"
	"os"
	"strings"
	"time"
)

// runReadme writes the phase table of one run between README's markers
// "<!-- times:LABEL:begin -->" and "<!-- times:LABEL:end -->".
func runReadme(args []string) error {
	fs := flag.NewFlagSet("readme", flag.ExitOnError)
	ph := fs.String("phases", "bin/test-results/phases.tsv", "the phase log of hack/test.sh")
	label := fs.String("label", "", "which run this is (the markers' LABEL)")
	note := fs.String("note", "", "one line on the run: machine, caches")
	_ = fs.Parse(args)
	if fs.NArg() != 1 || *label == "" {
		return fmt.Errorf("readme wants -label and the README's path")
	}
	phases, err := readPhases(*ph)
	if err != nil {
		return err
	}
	if len(phases) == 0 {
		return fmt.Errorf("%s has no phases", *ph)
	}
	b, err := os.ReadFile(fs.Arg(0))
	if err != nil {
		return err
	}
	out, err := replaceBlock(string(b), *label, phaseTable(phases, *note, time.Now()))
	if err != nil {
		return err
	}
	return os.WriteFile(fs.Arg(0), []byte(out), 0o644)
}

// phaseTable renders phases as a Markdown table with a total and a line saying when and where.
func phaseTable(phases []phase, note string, now time.Time) string {
	var b strings.Builder
	total := 0
	fmt.Fprintf(&b, "Measured %s", now.UTC().Format("2006-01-02 15:04 MST"))
	if note != "" {
		fmt.Fprintf(&b, ", %s", note)
	}
	b.WriteString(":\n\n| phase | seconds |\n| --- | ---: |\n")
	for _, p := range phases {
		res := ""
		if p.RC != 0 {
			res = fmt.Sprintf(" (failed, exit %d)", p.RC)
		}
		fmt.Fprintf(&b, "| %s | %d%s |\n", p.Name, p.Seconds, res)
		total += p.Seconds
	}
	fmt.Fprintf(&b, "| **total** | **%d** (%.1f min) |\n", total, float64(total)/60)
	return b.String()
}

// replaceBlock puts body between the label's markers in doc.
func replaceBlock(doc, label, body string) (string, error) {
	begin, end := "<!-- times:"+label+":begin -->", "<!-- times:"+label+":end -->"
	i, j := strings.Index(doc, begin), strings.Index(doc, end)
	if i < 0 || j < i {
		return "", fmt.Errorf("the README has no %s ... %s block", begin, end)
	}
	return doc[:i+len(begin)] + "\n" + body + doc[j:], nil
}
