package reports

import (
	"io"
	"os"
	"strings"

	"github.com/mattn/go-isatty"
	"github.com/olekukonko/tablewriter"
	"github.com/olekukonko/tablewriter/renderer"
	"github.com/olekukonko/tablewriter/tw"
)

// Table writes rows under a header as a text table: with box-drawing
// lines on a terminal, as plain columns (no box drawing, no colour) when w
// is a pipe or a file, so that grep and diff see only the figures. The
// header is written as given: tablewriter's own formatting would turn
// "transitions/s" into "TRANSITIONS / S".
func Table(w io.Writer, header []string, rows [][]string) error {
	opts := []tablewriter.Option{tablewriter.WithHeaderAutoFormat(tw.Off)}
	plain := !Terminal(w)
	if plain {
		opts = append(opts, tablewriter.WithHeaderAlignment(tw.AlignLeft), tablewriter.WithRenderer(renderer.NewBlueprint(tw.Rendition{
			Borders: tw.BorderNone,
			Symbols: tw.NewSymbols(tw.StyleNone),
			Settings: tw.Settings{
				Separators: tw.Separators{BetweenColumns: tw.Off, BetweenRows: tw.Off},
				Lines:      tw.Lines{ShowHeaderLine: tw.Off},
			},
		})))
	}
	var b strings.Builder
	t := tablewriter.NewTable(&b, opts...)
	t.Header(header)
	if err := t.Bulk(rows); err != nil {
		return err
	}
	if err := t.Render(); err != nil {
		return err
	}
	out := b.String()
	if plain {
		// Without borders the renderer still pads each cell with a space
		// on both sides: cut the line's first and trailing ones.
		lines := strings.Split(strings.TrimSuffix(out, "\n"), "\n")
		for i, l := range lines {
			lines[i] = strings.TrimRight(strings.TrimPrefix(l, " "), " ")
		}
		out = strings.Join(lines, "\n") + "\n"
	}
	_, err := io.WriteString(w, out)
	return err
}

// Terminal says whether w is a terminal: text for people may then use
// box drawing; anything else (a pipe, a file, a buffer) gets plain text.
func Terminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	return ok && (isatty.IsTerminal(f.Fd()) || isatty.IsCygwinTerminal(f.Fd()))
}
