// Package junit is the JUnit XML shape CI servers read - testsuites >
// testsuite > testcase, a case failing with <failure>, erring with <error>
// or skipped with <skipped>, counts on both container elements - and its
// writer. The evidence pages and compare's report fill it; neither runs
// anything.
package junit

import (
	"bytes"
	"encoding/xml"
	"fmt"
	"io"
)

// Suites is the document.
type Suites struct {
	XMLName  xml.Name `xml:"testsuites"`
	Name     string   `xml:"name,attr"`
	Tests    int      `xml:"tests,attr"`
	Failures int      `xml:"failures,attr"`
	Errors   int      `xml:"errors,attr"`
	Skipped  int      `xml:"skipped,attr"`
	Time     string   `xml:"time,attr"`
	Suites   []Suite  `xml:"testsuite"`
}

// Suite is one testsuite.
type Suite struct {
	Name       string     `xml:"name,attr"`
	Tests      int        `xml:"tests,attr"`
	Failures   int        `xml:"failures,attr"`
	Errors     int        `xml:"errors,attr"`
	Skipped    int        `xml:"skipped,attr"`
	Time       string     `xml:"time,attr"`
	Timestamp  string     `xml:"timestamp,attr,omitempty"`
	Properties []Property `xml:"properties>property"`
	Cases      []Case     `xml:"testcase"`
}

// Property is one name and value of a suite.
type Property struct {
	Name  string `xml:"name,attr"`
	Value string `xml:"value,attr"`
}

// Case is one testcase: a pass unless it carries a Failure, an Error or a
// Skipped.
type Case struct {
	Classname string   `xml:"classname,attr"`
	Name      string   `xml:"name,attr"`
	Time      string   `xml:"time,attr"`
	Failure   *Failure `xml:"failure"`
	Error     *Error   `xml:"error"`
	Skipped   *Skipped `xml:"skipped"`
	SystemOut string   `xml:"system-out,omitempty"`
}

// Failure fails a case.
type Failure struct {
	Message string `xml:"message,attr"`
	Type    string `xml:"type,attr"`
	Text    string `xml:",chardata"`
}

// Error is a case that could not finish.
type Error struct {
	Message string `xml:"message,attr"`
	Type    string `xml:"type,attr"`
	Text    string `xml:",chardata"`
}

// Skipped is a case that did not run, which is never a pass.
type Skipped struct {
	Message string `xml:"message,attr"`
}

// Count sets the suite's tests, failures, errors and skipped from its
// cases.
func (s *Suite) Count() {
	s.Tests, s.Failures, s.Errors, s.Skipped = 0, 0, 0, 0
	for _, c := range s.Cases {
		s.Tests++
		if c.Failure != nil {
			s.Failures++
		}
		if c.Error != nil {
			s.Errors++
		}
		if c.Skipped != nil {
			s.Skipped++
		}
	}
}

// Write writes the document, its counts summed from its suites (each
// counted first), after the XML header, indented, ending in a newline.
func Write(w io.Writer, doc Suites) error {
	doc.Tests, doc.Failures, doc.Errors, doc.Skipped = 0, 0, 0, 0
	for i := range doc.Suites {
		s := &doc.Suites[i]
		s.Count()
		doc.Tests += s.Tests
		doc.Failures += s.Failures
		doc.Errors += s.Errors
		doc.Skipped += s.Skipped
	}
	var b bytes.Buffer
	b.WriteString(xml.Header)
	enc := xml.NewEncoder(&b)
	enc.Indent("", "  ")
	if err := enc.Encode(doc); err != nil {
		return fmt.Errorf("junit %s: encode: %w", doc.Name, err)
	}
	b.WriteString("\n")
	if _, err := w.Write(b.Bytes()); err != nil {
		return fmt.Errorf("junit %s: write: %w", doc.Name, err)
	}
	return nil
}
