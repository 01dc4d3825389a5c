package cli

import (
	"io"

	"github.com/livecheck/livecheck/reports"
)

// writeGraph writes g's page to file, atomically.
func writeGraph(file string, g *reports.Graph) error {
	return reports.WriteFileAtomic(file, func(w io.Writer) error { return reports.WriteHTML(w, g) })
}
