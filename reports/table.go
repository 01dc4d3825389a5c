package reports

import (
	"io"

	"github.com/olekukonko/tablewriter"
)

// Table writes rows under a header as a text table.
func Table(w io.Writer, header []string, rows [][]string) error {
	t := tablewriter.NewWriter(w)
	t.Header(header)
	if err := t.Bulk(rows); err != nil {
		return err
	}
	return t.Render()
}
