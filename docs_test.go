package livecheck_test

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"unicode"
)

// maxReadmeLines is how long the README may grow: it is the front door,
// and the rest belongs in docs/.
const maxReadmeLines = 250

// TestDocsLinks checks the links of README.md and docs/*.md: each relative
// link names a file of the repository, each #anchor a heading of the page
// it points to (GitHub's rules), and every page under docs/ is linked from
// the README. It also holds the README to maxReadmeLines lines.
func TestDocsLinks(t *testing.T) {
	pages, err := filepath.Glob(filepath.Join("docs", "*.md"))
	if err != nil {
		t.Fatal(err)
	}
	files := append([]string{"README.md"}, pages...)
	for _, problem := range checkDocLinks(".", files) {
		t.Error(problem)
	}

	readme, err := os.ReadFile("README.md")
	if err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(string(readme), "\n"); n > maxReadmeLines {
		t.Errorf("README.md has %d lines, more than %d: move the detail to a page under docs/", n, maxReadmeLines)
	}
	linked := map[string]bool{}
	for _, l := range markdownLinks(string(readme)) {
		path, _, _ := strings.Cut(l.target, "#")
		linked[filepath.Clean(path)] = true
	}
	for _, p := range pages {
		if !linked[p] {
			t.Errorf("README.md does not link to %s", p)
		}
	}
}

// TestDocsLinksCatches makes sure the checker fails on each kind of broken
// link, so that TestDocsLinks passing means something.
func TestDocsLinksCatches(t *testing.T) {
	dir := t.TempDir()
	write := func(name, text string) {
		t.Helper()
		if err := os.MkdirAll(filepath.Dir(filepath.Join(dir, name)), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("docs/page.md", "# A page\n\n## Flags: `--nodes N`, and more\n\n## Twice\n\n## Twice\n")
	write("README.md", strings.Join([]string{
		"# Front door",
		"[ok](docs/page.md) [ok](docs/page.md#flags---nodes-n-and-more) [ok](#front-door)",
		"[ok](docs/page.md#twice-1) [ok](https://example.com/nowhere) [ok](docs/)",
		"`[not a link](nowhere.md)` and `properties.All[*node](s)`",
		"```",
		"[not a link](nowhere.md)",
		"```",
		"[bad](docs/missing.md) [bad](#no-such-heading) [bad](docs/page.md#twice-2)",
		"[bad](../outside.md)",
	}, "\n"))
	problems := checkDocLinks(dir, []string{"README.md", "docs/page.md"})
	want := []string{"docs/missing.md", "#no-such-heading", "docs/page.md#twice-2", "../outside.md"}
	if len(problems) != len(want) {
		t.Fatalf("problems %q, want one each for %q", problems, want)
	}
	for i, w := range want {
		if !strings.Contains(problems[i], "("+w+")") {
			t.Errorf("problem %d is %q, want one about %s", i, problems[i], w)
		}
	}
}

// checkDocLinks returns a line for each broken link in files (paths
// relative to root).
func checkDocLinks(root string, files []string) []string {
	var problems []string
	anchors := map[string]map[string]bool{}
	anchorsOf := func(file string) (map[string]bool, error) {
		if a, ok := anchors[file]; ok {
			return a, nil
		}
		text, err := os.ReadFile(filepath.Join(root, file))
		if err != nil {
			return nil, err
		}
		anchors[file] = headingAnchors(string(text))
		return anchors[file], nil
	}
	for _, file := range files {
		text, err := os.ReadFile(filepath.Join(root, file))
		if err != nil {
			problems = append(problems, err.Error())
			continue
		}
		for _, l := range markdownLinks(string(text)) {
			bad := func(format string, args ...any) {
				problems = append(problems, fmt.Sprintf("%s:%d: [%s](%s): %s", file, l.line, l.text, l.target, fmt.Sprintf(format, args...)))
			}
			if strings.HasPrefix(l.target, "http://") || strings.HasPrefix(l.target, "https://") || strings.HasPrefix(l.target, "mailto:") {
				continue
			}
			path, anchor, _ := strings.Cut(l.target, "#")
			target := file
			if path != "" {
				target = filepath.Join(filepath.Dir(file), filepath.FromSlash(path))
				if target == ".." || strings.HasPrefix(target, ".."+string(filepath.Separator)) || filepath.IsAbs(path) {
					bad("outside the repository")
					continue
				}
				if _, err := os.Stat(filepath.Join(root, target)); err != nil {
					bad("no such file")
					continue
				}
			}
			if anchor == "" {
				continue
			}
			if !strings.HasSuffix(target, ".md") {
				bad("an anchor into a file that is not markdown")
				continue
			}
			a, err := anchorsOf(target)
			if err != nil {
				bad("%v", err)
				continue
			}
			if !a[anchor] {
				bad("no heading in %s makes the anchor #%s", filepath.ToSlash(target), anchor)
			}
		}
	}
	return problems
}

type mdLink struct {
	text, target string
	line         int
}

var linkRE = regexp.MustCompile(`\[([^\]]*)\]\(([^)\s]+)(?:\s+"[^"]*")?\)`)

// markdownLinks returns the inline links of a markdown text, leaving out
// those in code blocks and code spans.
func markdownLinks(text string) []mdLink {
	prose := stripCode(text)
	var links []mdLink
	for _, m := range linkRE.FindAllStringSubmatchIndex(prose, -1) {
		links = append(links, mdLink{
			text:   prose[m[2]:m[3]],
			target: prose[m[4]:m[5]],
			line:   1 + strings.Count(prose[:m[0]], "\n"),
		})
	}
	return links
}

// stripCode blanks out fenced code blocks and code spans, keeping the
// newlines so that line numbers stay right.
func stripCode(text string) string {
	lines := strings.Split(text, "\n")
	fence := ""
	for i, l := range lines {
		trimmed := strings.TrimLeft(l, " ")
		switch {
		case fence != "":
			if strings.HasPrefix(trimmed, fence) {
				fence = ""
			}
			lines[i] = ""
		case strings.HasPrefix(trimmed, "```"), strings.HasPrefix(trimmed, "~~~"):
			fence = trimmed[:3]
			lines[i] = ""
		}
	}
	text = strings.Join(lines, "\n")

	// Code spans: a run of n backticks up to the next run of exactly n,
	// within a paragraph.
	var b strings.Builder
	for i := 0; i < len(text); {
		if text[i] != '`' {
			b.WriteByte(text[i])
			i++
			continue
		}
		n := runOf(text, i, '`')
		end := -1
		for j := i + n; j < len(text); {
			if text[j] == '`' {
				m := runOf(text, j, '`')
				if m == n {
					end = j
					break
				}
				j += m
				continue
			}
			if strings.HasPrefix(text[j:], "\n\n") {
				break
			}
			j++
		}
		if end < 0 {
			b.WriteString(text[i : i+n])
			i += n
			continue
		}
		for _, r := range text[i : end+n] {
			if r == '\n' {
				b.WriteByte('\n')
			} else {
				b.WriteByte(' ')
			}
		}
		i = end + n
	}
	return b.String()
}

func runOf(s string, i int, c byte) int {
	n := 0
	for i+n < len(s) && s[i+n] == c {
		n++
	}
	return n
}

var (
	headingRE    = regexp.MustCompile(`^ {0,3}(#{1,6})\s+(.*?)\s*#*\s*$`)
	headingLinkR = regexp.MustCompile(`\[([^\]]*)\]\([^)]*\)`)
)

// headingAnchors returns the anchors GitHub makes for the headings of a
// markdown text: the text lowercased, markup dropped, spaces made '-',
// every other character but letters, digits, '-' and '_' removed, and a
// heading met again numbered -1, -2, ...
func headingAnchors(text string) map[string]bool {
	anchors := map[string]bool{}
	seen := map[string]int{}
	fence := ""
	for _, l := range strings.Split(text, "\n") {
		trimmed := strings.TrimLeft(l, " ")
		if fence != "" {
			if strings.HasPrefix(trimmed, fence) {
				fence = ""
			}
			continue
		}
		if strings.HasPrefix(trimmed, "```") || strings.HasPrefix(trimmed, "~~~") {
			fence = trimmed[:3]
			continue
		}
		m := headingRE.FindStringSubmatch(l)
		if m == nil {
			continue
		}
		title := headingLinkR.ReplaceAllString(m[2], "$1")
		var slug strings.Builder
		for _, r := range strings.ToLower(title) {
			switch {
			case r == ' ':
				slug.WriteByte('-')
			case r == '-' || r == '_' || unicode.IsLetter(r) || unicode.IsDigit(r):
				slug.WriteRune(r)
			}
		}
		s := slug.String()
		if n := seen[s]; n > 0 {
			anchors[fmt.Sprintf("%s-%d", s, n)] = true
		} else {
			anchors[s] = true
		}
		seen[s]++
	}
	return anchors
}
